"use client";

import { Alert, Button, Card, Chip, Dropdown, Skeleton, Table, Tooltip } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { pluralize } from "../format";
import { KeyIcon, MoreIcon, PlusIcon, RefreshIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { STATUS_DISPLAY, maskedKey, ownerLabel } from "./api-key-display";
import { ConfirmActionDialog } from "./confirm-action-dialog";
import { CreateApiKeyDialog } from "./create-api-key-dialog";
import { IssuedKeyDialog } from "./issued-key-dialog";
import type { IssuedKey } from "./issued-key-dialog";

type ApiKeySummary = inferRouterOutputs<AppRouter>["apiKeys"]["list"][number];
type PendingAction = { kind: "revoke" | "rotate"; key: ApiKeySummary };

/**
 * Settings → API keys: every key of one namespace with its prefix, name,
 * scopes, owner, times and status; create, rotate and revoke. A secret is on
 * screen only in the IssuedKeyDialog, right after it is minted.
 */
export function ApiKeysPanel({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions({ namespace }));
  const accounts = useQuery(trpc.apiKeys.serviceAccounts.list.queryOptions({ namespace }));
  const [creating, setCreating] = useState(false);
  const [pending, setPending] = useState<PendingAction | null>(null);
  const [issued, setIssued] = useState<IssuedKey | null>(null);

  const invalidate = () => queryClient.invalidateQueries(trpc.apiKeys.pathFilter());
  const revoke = useMutation(
    trpc.apiKeys.revoke.mutationOptions({
      onSuccess: async () => {
        setPending(null);
        await invalidate();
      },
    }),
  );
  const rotate = useMutation(
    trpc.apiKeys.rotate.mutationOptions({
      onSuccess: async (rotated) => {
        const name = keys.data?.find((k) => k.id === rotated.replaced.id)?.name ?? "";
        setIssued({ title: "API key rotated", name, key: rotated.key, replacedPrefix: rotated.replaced.prefix });
        setPending(null);
        await invalidate();
      },
    }),
  );

  function ask(action: PendingAction) {
    revoke.reset();
    rotate.reset();
    setPending(action);
  }

  const activeCount = keys.data?.filter((k) => k.status === "active").length ?? 0;

  return (
    <Card aria-labelledby="api-keys-heading" className="gap-0 p-0" role="region">
      <div className="flex flex-col gap-3 border-b border-separator px-5 py-4 sm:flex-row sm:items-start">
        <div className="flex min-w-0 flex-1 items-start gap-3">
          <span className="mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-lg bg-accent-soft text-accent">
            <KeyIcon className="size-[18px]" />
          </span>
          <div className="min-w-0">
            <h2 className="text-base font-semibold tracking-tight text-foreground" id="api-keys-heading">
              API keys
            </h2>
            <p className="text-sm text-muted">
              For workers and scripts calling the REST API of <span className="font-medium text-foreground">{namespace}</span>, sent as{" "}
              <code className="font-mono text-[13px]">Authorization: Bearer</code>.
            </p>
          </div>
        </div>
        <div className="flex items-center gap-2 self-end sm:self-auto">
          <Tooltip delay={400}>
            <Button aria-label="Refresh" isDisabled={keys.isFetching} isIconOnly size="sm" variant="ghost" onPress={() => void keys.refetch()}>
              <RefreshIcon className={`size-4 ${keys.isFetching ? "animate-spin" : ""}`} />
            </Button>
            <Tooltip.Content>Refresh</Tooltip.Content>
          </Tooltip>
          <Button size="sm" onPress={() => setCreating(true)}>
            <PlusIcon className="size-4" />
            Create key
          </Button>
        </div>
      </div>

      {keys.isError && !keys.data ? (
        <div className="p-5">
          <Alert status="danger">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>API keys could not be loaded</Alert.Title>
              <Alert.Description>{keys.error.message}</Alert.Description>
            </Alert.Content>
            <Button size="sm" variant="danger-soft" onPress={() => void keys.refetch()}>
              Try again
            </Button>
          </Alert>
        </div>
      ) : keys.isPending ? (
        <KeyTableSkeleton />
      ) : keys.data.length === 0 ? (
        <div className="flex flex-col items-center gap-2 px-6 py-12 text-center">
          <p className="text-sm font-medium text-foreground">No API keys in {namespace} yet</p>
          <p className="max-w-md text-sm text-muted">
            Create one for each worker fleet or script, with the narrowest scope it needs: a worker key can poll and report tasks and nothing
            else.
          </p>
          <Button className="mt-2" size="sm" variant="secondary" onPress={() => setCreating(true)}>
            Create the first key
          </Button>
        </div>
      ) : (
        <KeyTable
          footer={`${pluralize(activeCount, "active key")} · ${pluralize(keys.data.length, "key")} in ${namespace}`}
          rows={keys.data}
          onAction={ask}
        />
      )}

      <CreateApiKeyDialog
        isOpen={creating}
        namespace={namespace}
        serviceAccounts={(accounts.data ?? []).map((a) => ({ id: a.id, name: a.name, disabled: a.disabledAt !== null }))}
        onCreated={setIssued}
        onOpenChange={setCreating}
      />

      <ConfirmActionDialog
        confirmLabel="Revoke key"
        error={revoke.error?.message ?? null}
        isOpen={pending?.kind === "revoke"}
        isPending={revoke.isPending}
        pendingLabel="Revoking…"
        title={`Revoke “${pending?.key.name ?? ""}”?`}
        onConfirm={() => pending && revoke.mutate({ namespace, apiKeyId: pending.key.id })}
        onOpenChange={(open) => (open ? undefined : setPending(null))}
      >
        <p>
          <code className="font-mono text-[13px]">{pending ? maskedKey(pending.key.prefix) : ""}</code> stops working on its next request:
          anything using it gets 401 from then on. This cannot be undone.
        </p>
      </ConfirmActionDialog>

      <ConfirmActionDialog
        confirmLabel="Rotate key"
        error={rotate.error?.message ?? null}
        isOpen={pending?.kind === "rotate"}
        isPending={rotate.isPending}
        pendingLabel="Rotating…"
        status="warning"
        title={`Rotate “${pending?.key.name ?? ""}”?`}
        onConfirm={() => pending && rotate.mutate({ namespace, apiKeyId: pending.key.id })}
        onOpenChange={(open) => (open ? undefined : setPending(null))}
      >
        <p>
          A new key with the same name, scopes, owner and expiry replaces{" "}
          <code className="font-mono text-[13px]">{pending ? maskedKey(pending.key.prefix) : ""}</code>, which stops working at once.
        </p>
        <p className="text-muted">Have the new key ready to give to everything that uses the old one.</p>
      </ConfirmActionDialog>

      <IssuedKeyDialog issued={issued} onClose={() => setIssued(null)} />
    </Card>
  );
}

function ScopeChips({ scopes }: { scopes: ApiKeySummary["scopes"] }) {
  return (
    <span className="flex flex-wrap gap-1">
      {scopes.map((scope) => (
        <Chip key={scope} color={scope === "admin" ? "accent" : "default"} size="sm" variant="soft">
          {scope}
        </Chip>
      ))}
    </span>
  );
}

function StatusChip({ status }: { status: ApiKeySummary["status"] }) {
  const display = STATUS_DISPLAY[status];
  return (
    <Chip color={display.color} size="sm" variant="soft">
      {display.label}
    </Chip>
  );
}

function LastUsed({ iso, className }: { iso: string | null; className?: string }) {
  return iso ? <RelativeTime className={className} iso={iso} /> : <span className={className}>Never</span>;
}

function KeyTable({ rows, footer, onAction }: { rows: ApiKeySummary[]; footer: string; onAction: (action: PendingAction) => void }) {
  return (
    <Table className="rounded-none border-0 shadow-none">
      <Table.ScrollContainer>
        <Table.Content aria-label="API keys">
          <Table.Header>
            <Table.Column isRowHeader>Key</Table.Column>
            {/*
              Narrower screens fold these columns into the Key cell. The last
              column never hides: the table draws its rounded corners on it.
            */}
            <Table.Column className="hidden w-32 md:table-cell">Scopes</Table.Column>
            <Table.Column className="hidden lg:table-cell">Owner</Table.Column>
            <Table.Column className="hidden w-28 xl:table-cell">Created</Table.Column>
            <Table.Column className="hidden w-28 sm:table-cell">Last used</Table.Column>
            <Table.Column className="hidden w-32 sm:table-cell">Status</Table.Column>
            <Table.Column className="w-14">
              <span className="sr-only">Actions</span>
            </Table.Column>
          </Table.Header>
          <Table.Body>
            {rows.map((row) => {
              const owner = ownerLabel(row.owner);
              const live = row.status === "active";
              return (
                <Table.Row key={row.id} id={row.id}>
                  <Table.Cell>
                    <div className="flex min-w-0 flex-col gap-1 py-0.5">
                      <span className={`truncate font-medium ${live ? "text-foreground" : "text-muted"}`}>{row.name}</span>
                      <code className="truncate font-mono text-xs text-muted">{maskedKey(row.prefix)}</code>
                      <span className="flex flex-wrap items-center gap-1.5 md:hidden">
                        <span className="sm:hidden">
                          <StatusChip status={row.status} />
                        </span>
                        <ScopeChips scopes={row.scopes} />
                      </span>
                      <span className="truncate text-xs text-muted lg:hidden">
                        {owner.kind}: {owner.label}
                      </span>
                      <span className="text-xs text-muted sm:hidden">
                        Last used <LastUsed iso={row.lastUsedAt} />
                      </span>
                    </div>
                  </Table.Cell>
                  <Table.Cell className="hidden md:table-cell">
                    <ScopeChips scopes={row.scopes} />
                  </Table.Cell>
                  <Table.Cell className="hidden lg:table-cell">
                    <div className="flex min-w-0 flex-col">
                      <span className="truncate text-sm text-foreground">{owner.label}</span>
                      <span className="text-xs text-muted">{owner.kind}</span>
                    </div>
                  </Table.Cell>
                  <Table.Cell className="hidden xl:table-cell">
                    <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={row.createdAt} />
                  </Table.Cell>
                  <Table.Cell className="hidden sm:table-cell">
                    <LastUsed className="text-sm whitespace-nowrap text-muted" iso={row.lastUsedAt} />
                  </Table.Cell>
                  <Table.Cell className="hidden sm:table-cell">
                    <div className="flex flex-col items-start gap-0.5">
                      <StatusChip status={row.status} />
                      {row.status === "revoked" && row.revokedAt ? (
                        <RelativeTime className="text-xs text-muted" iso={row.revokedAt} />
                      ) : row.expiresAt ? (
                        <span className="text-xs text-muted">
                          {row.status === "expired" ? "Expired " : "Expires "}
                          <RelativeTime iso={row.expiresAt} />
                        </span>
                      ) : null}
                    </div>
                  </Table.Cell>
                  <Table.Cell>
                    {row.status === "revoked" ? null : (
                      <div className="flex justify-end">
                        <Dropdown>
                          <Button aria-label={`Actions for ${row.name}`} isIconOnly size="sm" variant="ghost">
                            <MoreIcon className="size-4" />
                          </Button>
                          <Dropdown.Popover placement="bottom end">
                            <Dropdown.Menu
                              aria-label={`Actions for ${row.name}`}
                              // An expired key has nothing left to rotate, and a disabled owner could not use a new one.
                              disabledKeys={live ? [] : ["rotate"]}
                              onAction={(action) => onAction({ kind: action === "rotate" ? "rotate" : "revoke", key: row })}
                            >
                              <Dropdown.Item id="rotate" textValue="Rotate">
                                Rotate…
                              </Dropdown.Item>
                              <Dropdown.Item id="revoke" textValue="Revoke" variant="danger">
                                Revoke…
                              </Dropdown.Item>
                            </Dropdown.Menu>
                          </Dropdown.Popover>
                        </Dropdown>
                      </div>
                    )}
                  </Table.Cell>
                </Table.Row>
              );
            })}
          </Table.Body>
        </Table.Content>
      </Table.ScrollContainer>
      <Table.Footer>
        <span aria-live="polite" className="text-xs text-muted">
          {footer}
        </span>
      </Table.Footer>
    </Table>
  );
}

function KeyTableSkeleton() {
  return (
    <div aria-busy="true" aria-label="Loading API keys" className="flex flex-col gap-4 p-5">
      {[0, 1, 2].map((i) => (
        <div key={i} className="flex items-center gap-4">
          <div className="flex flex-1 flex-col gap-2">
            <Skeleton className="h-3.5 w-36 rounded-md" />
            <Skeleton className="h-3 w-28 rounded-md" />
          </div>
          <Skeleton className="hidden h-5 w-14 rounded-full md:block" />
          <Skeleton className="hidden h-3 w-20 rounded-md sm:block" />
          <Skeleton className="h-7 w-20 rounded-lg" />
        </div>
      ))}
    </div>
  );
}
