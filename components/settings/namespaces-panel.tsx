"use client";

import { Button, Chip, Table, buttonVariants } from "@heroui/react";
import type { Route } from "next";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useConsoleSession } from "../console-session";
import { pluralize } from "../format";
import { LayersIcon, PlusIcon } from "../icons";
import { CreateNamespaceDialog } from "./create-namespace-dialog";
import { roleLabel } from "./role-options";
import { SectionCard } from "./section-card";

/**
 * Settings → Namespaces: the ones this user can see, with their role in each.
 * An owner creates namespaces; an admin of one manages its members.
 */
export function NamespacesPanel() {
  const { user, namespaces, namespace: current, setNamespace } = useConsoleSession();
  const [creating, setCreating] = useState(false);
  const router = useRouter();

  return (
    <SectionCard
      actions={
        user.isOwner ? (
          <Button size="sm" onPress={() => setCreating(true)}>
            <PlusIcon className="size-4" />
            Create namespace
          </Button>
        ) : null
      }
      description={user.isOwner ? "As an owner you are an admin in every namespace." : "The namespaces you belong to, directly or through a group."}
      icon={<LayersIcon className="size-[18px]" />}
      id="namespaces"
      title="Namespaces"
    >
      {namespaces.length === 0 ? (
        <div className="flex flex-col items-center gap-2 px-6 py-12 text-center">
          <p className="text-sm font-medium text-foreground">You are not in any namespace yet</p>
          <p className="max-w-md text-sm text-muted">An admin of a namespace adds you to it, or to a group with a role there.</p>
        </div>
      ) : (
        <Table className="rounded-none border-0 shadow-none">
          <Table.ScrollContainer>
            <Table.Content aria-label="Namespaces">
              <Table.Header>
                <Table.Column isRowHeader>Namespace</Table.Column>
                <Table.Column className="hidden w-32 sm:table-cell">Your role</Table.Column>
                <Table.Column className="w-32 text-right sm:w-56">
                  <span className="sr-only">Actions</span>
                </Table.Column>
              </Table.Header>
              <Table.Body>
                {namespaces.map((n) => (
                  <Table.Row key={n.id} id={n.id}>
                    <Table.Cell>
                      <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
                        <span className="flex items-center gap-2">
                          <span className="truncate font-mono text-[13px] font-medium text-foreground">{n.name}</span>
                          {n.name === current ? (
                            <Chip color="accent" size="sm" variant="soft">
                              Current
                            </Chip>
                          ) : null}
                        </span>
                        {n.description ? <span className="line-clamp-2 text-[13px] text-muted">{n.description}</span> : null}
                        <span className="text-xs text-muted sm:hidden">{n.role ? roleLabel(n.role) : "No role"}</span>
                      </div>
                    </Table.Cell>
                    <Table.Cell className="hidden sm:table-cell">
                      <Chip color={n.role === "admin" ? "accent" : "default"} size="sm" variant="soft">
                        {n.role ? roleLabel(n.role) : "No role"}
                      </Chip>
                    </Table.Cell>
                    <Table.Cell>
                      <div className="flex flex-col items-end gap-1.5 sm:flex-row sm:justify-end">
                        {n.name !== current ? (
                          <Button aria-label={`Switch to ${n.name}`} size="sm" variant="ghost" onPress={() => setNamespace(n.name)}>
                            Switch to
                          </Button>
                        ) : null}
                        {n.role === "admin" ? (
                          <Link
                            aria-label={`Members of ${n.name}`}
                            className={buttonVariants({ size: "sm", variant: "secondary" })}
                            href={`/settings/namespaces/${encodeURIComponent(n.name)}` as Route}
                          >
                            Members
                          </Link>
                        ) : null}
                      </div>
                    </Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Content>
          </Table.ScrollContainer>
          <Table.Footer>
            <span aria-live="polite" className="text-xs text-muted">
              {pluralize(namespaces.length, "namespace")}
            </span>
          </Table.Footer>
        </Table>
      )}
      {/* A new namespace has nobody in it: adding members is the next thing to do. */}
      <CreateNamespaceDialog
        isOpen={creating}
        onCreated={(name) => router.push(`/settings/namespaces/${encodeURIComponent(name)}` as Route)}
        onOpenChange={setCreating}
      />
    </SectionCard>
  );
}
