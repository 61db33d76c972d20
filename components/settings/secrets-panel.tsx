"use client";

import { Button, Description, FieldError, Form, Input, Label, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useFormErrors } from "../form-errors";
import { KeyIcon, PlusIcon } from "../icons";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FormAlert } from "../ui/form-alert";
import { LoadError, SectionCard } from "./section-card";
import { FormActions } from "../ui/form-actions";
import { NamespaceSection } from "./namespace-section";
import { changedColumn } from "./columns";

type Secret = inferRouterOutputs<AppRouter>["secrets"]["list"][number];

/** Settings → Secrets of the namespace in the switcher; admins set and delete, everyone who edits sees the names. */
export function CurrentNamespaceSecrets() {
  return <NamespaceSection writers={["admin"]}>{(namespace, canWrite) => <SecretsPanel canWrite={canWrite} namespace={namespace} />}</NamespaceSection>;
}

function SecretsPanel({ namespace, canWrite }: { namespace: string; canWrite: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const secrets = useQuery(trpc.secrets.list.queryOptions({ namespace }));
  const [editing, setEditing] = useState<{ name: string; isNew: boolean } | null>(null);
  const [deleting, setDeleting] = useState<Secret | null>(null);
  const remove = useMutation(
    trpc.secrets.delete.mutationOptions({
      onSuccess: async () => {
        setDeleting(null);
        await queryClient.invalidateQueries(trpc.secrets.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<Secret>[] = [
    { id: "name", header: "Name", isRowHeader: true, cell: (s) => <code className="font-mono text-sm">{s.name}</code> },
    { id: "description", header: "Description", hiddenBelow: "sm", cell: (s) => s.description ?? <span className="text-muted">—</span> },
    changedColumn<Secret>("md"),
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-40 text-right",
      cell: (s) =>
        canWrite ? (
          <div className="flex justify-end gap-1">
            <Button aria-label={`Replace the value of ${s.name}`} size="sm" variant="ghost" onPress={() => setEditing({ name: s.name, isNew: false })}>
              Replace
            </Button>
            <Button aria-label={`Delete ${s.name}`} size="sm" variant="ghost" onPress={() => setDeleting(s)}>
              Delete
            </Button>
          </div>
        ) : null,
    },
  ];

  return (
    <SectionCard
      actions={
        canWrite ? (
          <Button size="sm" onPress={() => setEditing({ name: "", isNew: true })}>
            <PlusIcon className="size-4" />
            Add secret
          </Button>
        ) : undefined
      }
      description={
        <>
          Values for <span className="font-medium text-foreground">{namespace}</span>&apos;s webhooks, listeners and tasks (<code className="font-mono text-xs">{"${workflow.secrets.NAME}"}</code>), sealed at rest. A value is never shown again once saved: runs show <code className="font-mono text-xs">***</code>.
        </>
      }
      icon={<KeyIcon className="size-[18px]" />}
      id="secrets"
      title="Secrets"
    >
      {editing !== null ? <SecretForm isNew={editing.isNew} name={editing.name} namespace={namespace} onDone={() => setEditing(null)} /> : null}
      {secrets.isError && !secrets.data ? (
        <LoadError message={secrets.error.message} what="Secrets" onRetry={() => void secrets.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState title="No secrets yet">A webhook names the secret that signs its calls; add it here first.</EmptyState>}
          label="Secrets"
          loadingLabel="Loading secrets"
          rowKey={(s) => s.name}
          rows={secrets.data}
        />
      )}
      <ConfirmDialog
        confirmLabel="Delete secret"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete the secret ${deleting?.name ?? ""}?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        Webhooks and listeners that name it are refused from then on, and tasks that read it fail when they are sent, until a secret of that name is added again.
      </ConfirmDialog>
    </SectionCard>
  );
}

function SecretForm({ namespace, name: initialName, isNew, onDone }: { namespace: string; name: string; isNew: boolean; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(initialName);
  const [value, setValue] = useState("");
  const [description, setDescription] = useState("");
  const put = useMutation(
    trpc.secrets.put.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.secrets.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form } = useFormErrors(put.error);
  return (
    <Form
      aria-label={isNew ? "Add a secret" : `Replace ${initialName}`}
      className="flex flex-col gap-4 border-b border-separator px-5 py-4"
      validationErrors={fields}
      onSubmit={(event) => {
        event.preventDefault();
        put.mutate({ namespace, name: name.trim(), value, ...(isNew ? { description: description.trim() || null } : {}) });
      }}
    >
      <FormAlert message={form} title="The secret was not saved" />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField autoFocus={isNew} isDisabled={!isNew} isRequired name="name" value={name} onChange={setName}>
          <Label>Name</Label>
          <Input className="font-mono" placeholder="GITHUB_WEBHOOK_SECRET" />
          <Description>Letters, digits and _, starting with a letter or _.</Description>
          <FieldError />
        </TextField>
        <TextField autoFocus={!isNew} isRequired name="value" type="password" value={value} onChange={setValue}>
          <Label>Value</Label>
          <Input autoComplete="off" />
          <Description>Stored sealed; nobody can read it back, you included.</Description>
          <FieldError />
        </TextField>
      </div>
      {isNew ? (
        <TextField name="description" value={description} onChange={setDescription}>
          <Label>Description</Label>
          <Input placeholder="Signs GitHub's push webhooks" />
          <FieldError />
        </TextField>
      ) : null}
      <FormActions isPending={put.isPending} submitLabel={isNew ? "Add secret" : "Replace value"} onCancel={onDone} />
    </Form>
  );
}
