"use client";

import { Button, Description, FieldError, Form, Input, Label, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useFormErrors } from "../form-errors";
import { LayersIcon, PlusIcon } from "../icons";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FormAlert } from "../ui/form-alert";
import { LoadError, SectionCard } from "./section-card";
import { FormActions } from "../ui/form-actions";
import { NamespaceSection } from "./namespace-section";
import { changedColumn, editDeleteColumn } from "./columns";

type Variable = inferRouterOutputs<AppRouter>["variables"]["list"][number];

/** Settings → Variables of the namespace in the switcher: everyone with a role reads them, editors and admins change them. */
export function CurrentNamespaceVariables() {
  return <NamespaceSection writers={["editor", "admin"]}>{(namespace, canWrite) => <VariablesPanel canWrite={canWrite} namespace={namespace} />}</NamespaceSection>;
}

function VariablesPanel({ namespace, canWrite }: { namespace: string; canWrite: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const variables = useQuery(trpc.variables.list.queryOptions({ namespace }));
  const [editing, setEditing] = useState<Variable | "new" | null>(null);
  const [deleting, setDeleting] = useState<Variable | null>(null);
  const remove = useMutation(
    trpc.variables.delete.mutationOptions({
      onSuccess: async () => {
        setDeleting(null);
        await queryClient.invalidateQueries(trpc.variables.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<Variable>[] = [
    { id: "name", header: "Name", isRowHeader: true, cell: (v) => <code className="font-mono text-sm">{v.name}</code> },
    {
      id: "value",
      header: "Value",
      cell: (v) => (
        <code className="block max-w-xs truncate font-mono text-sm" title={v.value}>
          {v.value === "" ? <span className="text-muted">(empty)</span> : v.value}
        </code>
      ),
    },
    { id: "description", header: "Description", hiddenBelow: "md", cell: (v) => v.description ?? <span className="text-muted">—</span> },
    changedColumn<Variable>(),
    editDeleteColumn<Variable>(canWrite, setEditing, setDeleting),
  ];

  return (
    <SectionCard
      actions={
        canWrite ? (
          <Button size="sm" onPress={() => setEditing("new")}>
            <PlusIcon className="size-4" />
            Add variable
          </Button>
        ) : undefined
      }
      description={
        <>
          Plain configuration of <span className="font-medium text-foreground">{namespace}</span>: task input reads one as{" "}
          <code className="font-mono text-xs">{"${workflow.env.NAME}"}</code>, filled in when the task is sent. For credentials, use a secret.
        </>
      }
      icon={<LayersIcon className="size-[18px]" />}
      id="variables"
      title="Variables"
    >
      {editing !== null ? <VariableForm key={editing === "new" ? "" : editing.name} namespace={namespace} variable={editing === "new" ? null : editing} onDone={() => setEditing(null)} /> : null}
      {variables.isError && !variables.data ? (
        <LoadError message={variables.error.message} what="Variables" onRetry={() => void variables.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState title="No variables yet">A base URL, a region, a switch: set it once here, read it in any workflow of the namespace.</EmptyState>}
          label="Variables"
          loadingLabel="Loading variables"
          rowKey={(v) => v.name}
          rows={variables.data}
        />
      )}
      <ConfirmDialog
        confirmLabel="Delete variable"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete the variable ${deleting?.name ?? ""}?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        Tasks that read it and are sent from then on fail, saying it is missing, until a variable of that name is added again.
      </ConfirmDialog>
    </SectionCard>
  );
}

function VariableForm({ namespace, variable, onDone }: { namespace: string; variable: Variable | null; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const isNew = variable === null;
  const [name, setName] = useState(variable?.name ?? "");
  const [value, setValue] = useState(variable?.value ?? "");
  const [description, setDescription] = useState(variable?.description ?? "");
  const put = useMutation(
    trpc.variables.put.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.variables.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form } = useFormErrors(put.error);
  return (
    <Form
      aria-label={isNew ? "Add a variable" : `Edit ${variable.name}`}
      className="flex flex-col gap-4 border-b border-separator px-5 py-4"
      validationErrors={fields}
      onSubmit={(event) => {
        event.preventDefault();
        put.mutate({ namespace, name: name.trim(), value, description: description.trim() || null });
      }}
    >
      <FormAlert message={form} title="The variable was not saved" />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField autoFocus={isNew} isDisabled={!isNew} isRequired name="name" value={name} onChange={setName}>
          <Label>Name</Label>
          <Input className="font-mono" placeholder="API_BASE_URL" />
          <Description>Letters, digits and _, starting with a letter or _.</Description>
          <FieldError />
        </TextField>
        <TextField name="description" value={description} onChange={setDescription}>
          <Label>Description</Label>
          <Input placeholder="Where the orders API lives" />
          <FieldError />
        </TextField>
      </div>
      <TextField autoFocus={!isNew} name="value" value={value} onChange={setValue}>
        <Label>Value</Label>
        <TextArea className="font-mono" rows={2} />
        <Description>Readable by everyone with a role in the namespace, and shown in runs as written here.</Description>
        <FieldError />
      </TextField>
      <FormActions isPending={put.isPending} submitLabel={isNew ? "Add variable" : "Save variable"} onCancel={onDone} />
    </Form>
  );
}
