"use client";

import { Button, Chip, Dropdown, Tooltip } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { pluralize } from "../format";
import { KeyIcon, MoreIcon, PlusIcon, RefreshIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import type { SkeletonCell } from "../ui/skeleton-rows";
import { STATUS_DISPLAY, maskedKey, ownerLabel } from "./api-key-display";
import { CreateApiKeyDialog } from "./create-api-key-dialog";
import { IssuedKeyDialog } from "./issued-key-dialog";
import type { IssuedKey } from "./issued-key-dialog";
import { LoadError, SectionCard } from "./section-card";

type ApiKeySummary = inferRouterOutputs<AppRouter>["apiKeys"]["list"][number];
type PendingAction = { kind: "revoke" | "rotate"; key: ApiKeySummary };

const KEY_SKELETON: readonly SkeletonCell[] = [
  { kind: "lines", width: "w-36" },
  { kind: "pill", hiddenBelow: "md" },
  { kind: "bar", hiddenBelow: "sm" },
  { kind: "button" },
];

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

  const columns: DataTableColumn<ApiKeySummary>[] = [
    {
      id: "key",
      header: "Key",
      isRowHeader: true,
      cell: (row) => {
        const owner = ownerLabel(row.owner);
        return (
          <div className="flex min-w-0 flex-col gap-1 py-0.5">
            <span className={`truncate font-medium ${row.status === "active" ? "text-foreground" : "text-muted"}`}>{row.name}</span>
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
        );
      },
    },
    // Narrower screens fold these columns into the Key cell.
    { id: "scopes", header: "Scopes", hiddenBelow: "md", className: "w-32", cell: (row) => <ScopeChips scopes={row.scopes} /> },
    {
      id: "owner",
      header: "Owner",
      hiddenBelow: "lg",
      cell: (row) => {
        const owner = ownerLabel(row.owner);
        return (
          <div className="flex min-w-0 flex-col">
            <span className="truncate text-sm text-foreground">{owner.label}</span>
            <span className="text-xs text-muted">{owner.kind}</span>
          </div>
        );
      },
    },
    {
      id: "created",
      header: "Created",
      hiddenBelow: "xl",
      className: "w-28",
      cell: (row) => <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={row.createdAt} />,
    },
    {
      id: "last-used",
      header: "Last used",
      hiddenBelow: "sm",
      className: "w-28",
      cell: (row) => <LastUsed className="text-sm whitespace-nowrap text-muted" iso={row.lastUsedAt} />,
    },
    {
      id: "status",
      header: "Status",
      hiddenBelow: "sm",
      className: "w-32",
      cell: (row) => (
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
      ),
    },
    { id: "actions", header: "Actions", headerHidden: true, className: "w-14", cell: (row) => <KeyActions row={row} onAction={ask} /> },
  ];

  return (
    <SectionCard
      actions={
        <>
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
        </>
      }
      description={
        <>
          For workers and scripts calling the REST API of <span className="font-medium text-foreground">{namespace}</span>, sent as{" "}
          <code className="font-mono text-[13px]">Authorization: Bearer</code>.
        </>
      }
      icon={<KeyIcon className="size-[18px]" />}
      id="api-keys"
      title="API keys"
    >
      {keys.isError && !keys.data ? (
        <LoadError message={keys.error.message} what="API keys" onRetry={() => void keys.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={
            <EmptyState
              action={
                <Button size="sm" variant="secondary" onPress={() => setCreating(true)}>
                  Create the first key
                </Button>
              }
              title={`No API keys in ${namespace} yet`}
            >
              Create one for each worker fleet or script, with the narrowest scope it needs: a worker key can poll and report tasks and nothing
              else.
            </EmptyState>
          }
          footer={`${pluralize(activeCount, "active key")} · ${pluralize(keys.data?.length ?? 0, "key")} in ${namespace}`}
          label="API keys"
          loadingLabel="Loading API keys"
          rowKey={(row) => row.id}
          rows={keys.data}
          skeleton={KEY_SKELETON}
        />
      )}

      <CreateApiKeyDialog
        isOpen={creating}
        namespace={namespace}
        serviceAccounts={(accounts.data ?? []).map((a) => ({ id: a.id, name: a.name, disabled: a.disabledAt !== null }))}
        onCreated={setIssued}
        onOpenChange={setCreating}
      />

      <ConfirmDialog
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
      </ConfirmDialog>

      <ConfirmDialog
        confirmLabel="Rotate key"
        error={rotate.error?.message ?? null}
        isOpen={pending?.kind === "rotate"}
        isPending={rotate.isPending}
        pendingLabel="Rotating…"
        tone="warning"
        title={`Rotate “${pending?.key.name ?? ""}”?`}
        onConfirm={() => pending && rotate.mutate({ namespace, apiKeyId: pending.key.id })}
        onOpenChange={(open) => (open ? undefined : setPending(null))}
      >
        <p>
          A new key with the same name, scopes, owner and expiry replaces{" "}
          <code className="font-mono text-[13px]">{pending ? maskedKey(pending.key.prefix) : ""}</code>, which stops working at once.
        </p>
        <p className="text-muted">Have the new key ready to give to everything that uses the old one.</p>
      </ConfirmDialog>

      <IssuedKeyDialog issued={issued} onClose={() => setIssued(null)} />
    </SectionCard>
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

function KeyActions({ row, onAction }: { row: ApiKeySummary; onAction: (action: PendingAction) => void }) {
  if (row.status === "revoked") return null;
  return (
    <div className="flex justify-end">
      <Dropdown>
        <Button aria-label={`Actions for ${row.name}`} isIconOnly size="sm" variant="ghost">
          <MoreIcon className="size-4" />
        </Button>
        <Dropdown.Popover placement="bottom end">
          <Dropdown.Menu
            aria-label={`Actions for ${row.name}`}
            // An expired key has nothing left to rotate, and a disabled owner could not use a new one.
            disabledKeys={row.status === "active" ? [] : ["rotate"]}
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
  );
}
