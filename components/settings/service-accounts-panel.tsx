"use client";

import { Button, Chip, Description, FieldError, Input, Label, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { pluralize } from "../format";
import { PlusIcon, ServiceAccountIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { FormAlert } from "../ui/form-alert";
import { FormDialog } from "../ui/form-dialog";
import type { SkeletonCell } from "../ui/skeleton-rows";
import { LoadError, SectionCard } from "./section-card";

type ServiceAccount = inferRouterOutputs<AppRouter>["apiKeys"]["serviceAccounts"]["list"][number];

// The panel usually holds a row or two, each a name over a description with a Disable button.
const ACCOUNT_SKELETON: readonly SkeletonCell[] = [{ kind: "lines", width: "w-48" }, { kind: "bar", hiddenBelow: "sm" }, { kind: "button" }];

/**
 * Service accounts: owners for keys that belong to a system rather than a
 * person. Disabling one refuses all of its keys at once (they are not revoked
 * one by one), and cannot be undone here.
 */
export function ServiceAccountsPanel({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const accounts = useQuery(trpc.apiKeys.serviceAccounts.list.queryOptions({ namespace }));
  const [creating, setCreating] = useState(false);
  const [disabling, setDisabling] = useState<ServiceAccount | null>(null);

  const disable = useMutation(
    trpc.apiKeys.serviceAccounts.disable.mutationOptions({
      onSuccess: async () => {
        setDisabling(null);
        // Key statuses change too ("Owner disabled"), so the whole apiKeys tree is refetched.
        await queryClient.invalidateQueries(trpc.apiKeys.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<ServiceAccount>[] = [
    {
      id: "name",
      header: "Name",
      isRowHeader: true,
      cell: (account) => (
        <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
          <span className="truncate font-medium text-foreground">{account.name}</span>
          {account.description ? <span className="line-clamp-2 text-[13px] text-muted">{account.description}</span> : null}
          <span className="text-xs text-muted sm:hidden">
            {pluralize(account.activeKeyCount, "active key")}
            {account.disabledAt ? " · disabled" : ""}
          </span>
        </div>
      ),
    },
    {
      id: "active-keys",
      header: "Active keys",
      hiddenBelow: "sm",
      className: "w-28",
      cell: (account) => <span className="text-sm tabular-nums">{account.activeKeyCount}</span>,
    },
    {
      id: "created",
      header: "Created",
      hiddenBelow: "md",
      className: "w-28",
      cell: (account) => <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={account.createdAt} />,
    },
    {
      id: "status",
      header: "Status",
      hiddenBelow: "sm",
      className: "w-28",
      cell: (account) =>
        account.disabledAt ? (
          <Chip color="danger" size="sm" variant="soft">
            Disabled
          </Chip>
        ) : (
          <Chip color="success" size="sm" variant="soft">
            Enabled
          </Chip>
        ),
    },
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-28 text-right",
      cell: (account) =>
        account.disabledAt ? null : (
          <div className="flex justify-end">
            <Button
              aria-label={`Disable ${account.name}`}
              size="sm"
              variant="danger-soft"
              onPress={() => {
                disable.reset();
                setDisabling(account);
              }}
            >
              Disable
            </Button>
          </div>
        ),
    },
  ];

  return (
    <SectionCard
      actions={
        <Button size="sm" variant="secondary" onPress={() => setCreating(true)}>
          <PlusIcon className="size-4" />
          New service account
        </Button>
      }
      description="Owners for keys used by systems, so a key does not leave with the person who created it."
      icon={<ServiceAccountIcon className="size-[18px]" />}
      id="service-accounts"
      title="Service accounts"
    >
      {accounts.isError && !accounts.data ? (
        <LoadError message={accounts.error.message} what="Service accounts" onRetry={() => void accounts.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<p className="px-5 py-6 text-sm text-muted">None yet. Keys created for “You” act for your own account.</p>}
          label="Service accounts"
          loadingLabel="Loading service accounts"
          rowKey={(account) => account.id}
          rows={accounts.data}
          skeleton={ACCOUNT_SKELETON}
          skeletonRows={2}
        />
      )}

      <CreateServiceAccountDialog isOpen={creating} namespace={namespace} onOpenChange={setCreating} />

      <ConfirmDialog
        confirmLabel="Disable account"
        error={disable.error?.message ?? null}
        isOpen={disabling !== null}
        isPending={disable.isPending}
        pendingLabel="Disabling…"
        title={`Disable “${disabling?.name ?? ""}”?`}
        onConfirm={() => disabling && disable.mutate({ namespace, serviceAccountId: disabling.id })}
        onOpenChange={(open) => (open ? undefined : setDisabling(null))}
      >
        <p>
          Its {disabling ? pluralize(disabling.activeKeyCount, "active key") : "keys"} stop working on their next request, and no new key can be
          created for it. This cannot be undone.
        </p>
      </ConfirmDialog>
    </SectionCard>
  );
}

function CreateServiceAccountDialog({ namespace, isOpen, onOpenChange }: { namespace: string; isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation(
    trpc.apiKeys.serviceAccounts.create.mutationOptions({
      onSuccess: async () => {
        onOpenChange(false);
        await queryClient.invalidateQueries(trpc.apiKeys.serviceAccounts.pathFilter());
      },
    }),
  );
  const { reset } = create;

  useEffect(() => {
    if (!isOpen) return;
    setName("");
    setDescription("");
    reset();
  }, [isOpen, reset]);

  const fieldErrors = Object.fromEntries(
    Object.entries(create.error?.data?.zodError?.fieldErrors ?? {}).filter((entry): entry is [string, string[]] => Array.isArray(entry[1])),
  );
  // A duplicate name comes back as a conflict whose message names the field.
  const conflict = create.error && Object.keys(fieldErrors).length === 0 ? create.error.message : null;

  return (
    <FormDialog
      bodyClassName="mt-2"
      description={
        <>
          In <span className="font-medium text-foreground">{namespace}</span>. Create keys for it from the API keys panel.
        </>
      }
      isOpen={isOpen}
      isPending={create.isPending}
      isSubmitDisabled={name.trim() === ""}
      label="New service account"
      pendingLabel="Creating…"
      submitLabel="Create account"
      title="New service account"
      validationErrors={conflict?.startsWith("name:") ? { ...fieldErrors, name: conflict.replace(/^name:\s*/, "") } : fieldErrors}
      onOpenChange={onOpenChange}
      onSubmit={() => create.mutate({ namespace, name: name.trim(), description: description.trim() || null })}
    >
      <FormAlert message={conflict?.startsWith("name:") ? null : conflict} title="The service account was not created" />
      <TextField autoFocus isRequired maxLength={100} name="name" value={name} onChange={setName}>
        <Label>Name</Label>
        <Input placeholder="billing-workers" />
        <FieldError />
      </TextField>
      <TextField maxLength={500} name="description" value={description} onChange={setDescription}>
        <Label>Description</Label>
        <TextArea placeholder="What runs as this account, and who to ask about it" rows={2} />
        <Description>Optional.</Description>
        <FieldError />
      </TextField>
    </FormDialog>
  );
}
