"use client";

import { Button, Chip, buttonVariants } from "@heroui/react";
import type { Route } from "next";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useConsoleSession } from "../console-session";
import { pluralize } from "../format";
import { LayersIcon, PlusIcon } from "../icons";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
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

  const columns: DataTableColumn<(typeof namespaces)[number]>[] = [
    {
      id: "namespace",
      header: "Namespace",
      isRowHeader: true,
      cell: (n) => (
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
      ),
    },
    {
      id: "role",
      header: "Your role",
      hiddenBelow: "sm",
      className: "w-32",
      cell: (n) => (
        <Chip color={n.role === "admin" ? "accent" : "default"} size="sm" variant="soft">
          {n.role ? roleLabel(n.role) : "No role"}
        </Chip>
      ),
    },
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-32 text-right sm:w-56",
      cell: (n) => (
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
      ),
    },
  ];

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
      <DataTable
        columns={columns}
        empty={<EmptyState title="You are not in any namespace yet">An admin of a namespace adds you to it, or to a group with a role there.</EmptyState>}
        footer={pluralize(namespaces.length, "namespace")}
        label="Namespaces"
        loadingLabel="Loading namespaces"
        rowKey={(n) => n.id}
        rows={namespaces}
      />
      {/* A new namespace has nobody in it: adding members is the next thing to do. */}
      <CreateNamespaceDialog
        isOpen={creating}
        onCreated={(name) => router.push(`/settings/namespaces/${encodeURIComponent(name)}` as Route)}
        onOpenChange={setCreating}
      />
    </SectionCard>
  );
}
