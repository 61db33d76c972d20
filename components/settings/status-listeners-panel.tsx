"use client";

import { Button, Checkbox, CheckboxGroup, Chip, Description, FieldError, Form, Input, Label, Switch, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import { WORKFLOW_STATUSES } from "@/engine";
import type { WorkflowStatus } from "@/engine";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useFormErrors } from "../form-errors";
import { PlusIcon, RefreshIcon } from "../icons";
import { OptionSelect } from "../option-select";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FormAlert } from "../ui/form-alert";
import { LoadError, SectionCard } from "./section-card";
import { FormActions } from "../ui/form-actions";
import { changedColumn, editDeleteColumn } from "./columns";

type StatusListener = inferRouterOutputs<AppRouter>["statusListeners"]["list"][number];

const DEFAULT_STATUSES: WorkflowStatus[] = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

/** The namespace's status listeners: a URL called (signed, retried, dead-lettered) when its runs reach a chosen status. */
export function StatusListenersPanel({ namespace, canWrite }: { namespace: string; canWrite: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const listeners = useQuery(trpc.statusListeners.list.queryOptions({ namespace }));
  const [editing, setEditing] = useState<StatusListener | "new" | null>(null);
  const [deleting, setDeleting] = useState<StatusListener | null>(null);
  const remove = useMutation(
    trpc.statusListeners.delete.mutationOptions({
      onSuccess: async () => {
        setDeleting(null);
        await queryClient.invalidateQueries(trpc.statusListeners.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<StatusListener>[] = [
    { id: "name", header: "Name", isRowHeader: true, cell: (l) => <code className="font-mono text-sm">{l.name}</code> },
    { id: "url", header: "Calls", cell: (l) => <code className="block max-w-xs truncate font-mono text-sm" title={l.url}>{l.url}</code> },
    { id: "on", header: "On", hiddenBelow: "md", cell: (l) => <span className="text-sm">{`${l.workflowName ?? "every workflow"}: ${l.statuses.join(", ")}`}</span> },
    {
      id: "state",
      header: "State",
      hiddenBelow: "sm",
      cell: (l) => (
        <div className="flex gap-1">
          <Chip color={l.enabled ? "success" : "default"} size="sm" variant="soft">
            {l.enabled ? "Enabled" : "Disabled"}
          </Chip>
          {l.secretName !== null ? (
            <Chip size="sm" title={`Signed with ${l.secretName}`} variant="soft">
              Signed
            </Chip>
          ) : null}
        </div>
      ),
    },
    changedColumn<StatusListener>(),
    editDeleteColumn<StatusListener>(canWrite, setEditing, setDeleting),
  ];

  return (
    <SectionCard
      actions={
        canWrite ? (
          <Button size="sm" onPress={() => setEditing("new")}>
            <PlusIcon className="size-4" />
            Add status listener
          </Button>
        ) : undefined
      }
      description={
        <>
          URLs <span className="font-medium text-foreground">{namespace}</span> calls when a run changes status: a POST of the change, signed with a secret when one is
          chosen, retried and kept as a dead letter when the receiver keeps failing.
        </>
      }
      icon={<RefreshIcon className="size-[18px]" />}
      id="status-listeners"
      title="Status listeners"
    >
      {editing !== null ? <StatusListenerForm key={editing === "new" ? "" : editing.name} listener={editing === "new" ? null : editing} namespace={namespace} onDone={() => setEditing(null)} /> : null}
      {listeners.isError && !listeners.data ? (
        <LoadError message={listeners.error.message} what="Status listeners" onRetry={() => void listeners.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState title="No status listeners yet">Tell a chat channel or a ticketing system when a run fails, without a task in every workflow.</EmptyState>}
          label="Status listeners"
          loadingLabel="Loading status listeners"
          rowKey={(l) => l.name}
          rows={listeners.data}
        />
      )}
      <ConfirmDialog
        confirmLabel="Delete status listener"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete the status listener ${deleting?.name ?? ""}?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        Its URL is called no more, and calls not yet made are dropped.
      </ConfirmDialog>
    </SectionCard>
  );
}

function StatusListenerForm({ namespace, listener, onDone }: { namespace: string; listener: StatusListener | null; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const secrets = useQuery(trpc.secrets.list.queryOptions({ namespace }));
  const isNew = listener === null;
  const [name, setName] = useState(listener?.name ?? "");
  const [url, setUrl] = useState(listener?.url ?? "");
  const [workflowName, setWorkflowName] = useState(listener?.workflowName ?? "");
  const [statuses, setStatuses] = useState<WorkflowStatus[]>((listener?.statuses as WorkflowStatus[] | undefined) ?? DEFAULT_STATUSES);
  const [secretName, setSecretName] = useState(listener?.secretName ?? "");
  const [enabled, setEnabled] = useState(listener?.enabled ?? true);
  const save = useMutation(
    trpc.statusListeners.save.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.statusListeners.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form } = useFormErrors(save.error);
  const secretOptions = [{ id: "", label: "Unsigned" }, ...(secrets.data ?? []).map((s) => ({ id: s.name, label: s.name }))];
  return (
    <Form
      aria-label={isNew ? "Add a status listener" : `Edit ${listener.name}`}
      className="flex flex-col gap-4 border-b border-separator px-5 py-4"
      validationErrors={fields}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ namespace, name: name.trim(), url: url.trim(), workflowName: workflowName.trim() || null, statuses, secretName: secretName || null, enabled });
      }}
    >
      <FormAlert message={form} title="The status listener was not saved" />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField autoFocus={isNew} isDisabled={!isNew} isRequired name="name" value={name} onChange={setName}>
          <Label>Name</Label>
          <Input className="font-mono" placeholder="failures-to-chat" />
          <Description>Letters, digits, _ . and -.</Description>
          <FieldError />
        </TextField>
        <TextField isRequired name="url" value={url} onChange={setUrl}>
          <Label>URL</Label>
          <Input className="font-mono" placeholder="https://hooks.example.com/node-flow" />
          <Description>Called under the HTTP tasks&apos; network policy.</Description>
          <FieldError />
        </TextField>
      </div>
      <TextField name="workflowName" value={workflowName} onChange={setWorkflowName}>
        <Label>Workflow</Label>
        <Input className="font-mono" placeholder="every workflow of the namespace" />
        <Description>Only this workflow&apos;s runs; empty: every workflow&apos;s.</Description>
        <FieldError />
      </TextField>
      <CheckboxGroup name="statuses" value={statuses} onChange={(values) => setStatuses(WORKFLOW_STATUSES.filter((s) => values.includes(s)))}>
        <Label>On</Label>
        <div className="flex flex-wrap gap-x-4 gap-y-1">
          {WORKFLOW_STATUSES.map((status) => (
            <Checkbox key={status} value={status}>
              <Checkbox.Content>
                <Checkbox.Control>
                  <Checkbox.Indicator />
                </Checkbox.Control>
                {status}
              </Checkbox.Content>
            </Checkbox>
          ))}
        </div>
        <FieldError />
      </CheckboxGroup>
      <OptionSelect label="Signed with" options={secretOptions} value={secretName} onChange={setSecretName} />
      <Switch isSelected={enabled} onChange={setEnabled}>
        <Switch.Content>
          <Switch.Control>
            <Switch.Thumb />
          </Switch.Control>
          Enabled
        </Switch.Content>
      </Switch>
      <FormActions isPending={save.isPending} submitLabel={isNew ? "Add status listener" : "Save status listener"} onCancel={onDone} />
    </Form>
  );
}
