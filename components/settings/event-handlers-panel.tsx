"use client";

import { Button, Chip, Description, FieldError, Form, Input, Label, Switch, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useMemo, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useFormErrors } from "../form-errors";
import { ExecutionsIcon, PlusIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FormAlert } from "../ui/form-alert";
import { LoadError, SectionCard } from "./section-card";
import { StatusListenersPanel } from "./status-listeners-panel";
import { FormActions, EditDeleteButtons } from "../ui/form-actions";
import { NamespaceSection } from "./namespace-section";
import { changedColumn } from "./columns";

type Outputs = inferRouterOutputs<AppRouter>;
type EventHandler = Outputs["eventHandlers"]["list"][number];
type EventExecution = Outputs["eventHandlers"]["executions"][number];

const STARTER_ACTIONS = '[\n  {\n    "action": "start_workflow",\n    "start_workflow": { "name": "", "input": { "orderId": "${orderId}" } }\n  }\n]';

const EXECUTION_COLOR = { COMPLETED: "success", SKIPPED: "default", FAILED: "danger" } as const;

/**
 * Settings → Event handlers of the namespace in the switcher, and below them
 * its status listeners: everyone with a role reads them, editors and admins
 * change them.
 */
export function CurrentNamespaceEventHandlers() {
  return (
    <NamespaceSection writers={["editor", "admin"]}>
      {(namespace, canWrite) => (
        <div className="flex flex-col gap-8">
          <EventHandlersPanel canWrite={canWrite} namespace={namespace} />
          <StatusListenersPanel canWrite={canWrite} namespace={namespace} />
        </div>
      )}
    </NamespaceSection>
  );
}

function EventHandlersPanel({ namespace, canWrite }: { namespace: string; canWrite: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const handlers = useQuery(trpc.eventHandlers.list.queryOptions({ namespace }));
  const [editing, setEditing] = useState<EventHandler | "new" | null>(null);
  const [deleting, setDeleting] = useState<EventHandler | null>(null);
  const [watching, setWatching] = useState<string | null>(null);
  const remove = useMutation(
    trpc.eventHandlers.delete.mutationOptions({
      onSuccess: async (_, { name }) => {
        setDeleting(null);
        if (watching === name) setWatching(null);
        await queryClient.invalidateQueries(trpc.eventHandlers.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<EventHandler>[] = [
    { id: "name", header: "Name", isRowHeader: true, cell: (h) => <code className="font-mono text-sm">{h.name}</code> },
    { id: "event", header: "Event", cell: (h) => <code className="block max-w-xs truncate font-mono text-sm" title={h.event}>{h.event}</code> },
    {
      id: "active",
      header: "State",
      hiddenBelow: "sm",
      cell: (h) => (
        <Chip color={h.active ? "success" : "default"} size="sm" variant="soft">
          {h.active ? "Active" : "Inactive"}
        </Chip>
      ),
    },
    { id: "actions-kind", header: "Does", hiddenBelow: "md", cell: (h) => <span className="text-sm">{actionKinds(h.actions)}</span> },
    changedColumn<EventHandler>(),
    {
      id: "row-actions",
      header: "Actions",
      headerHidden: true,
      className: "w-56 text-right",
      cell: (h) => (
        <div className="flex justify-end gap-1">
          <Button aria-label={`Executions of ${h.name}`} aria-pressed={watching === h.name} size="sm" variant="ghost" onPress={() => setWatching(watching === h.name ? null : h.name)}>
            Executions
          </Button>
          {canWrite ? (
            <EditDeleteButtons name={h.name} onDelete={() => setDeleting(h)} onEdit={() => setEditing(h)} />
          ) : null}
        </div>
      ),
    },
  ];

  return (
    <SectionCard
      actions={
        canWrite ? (
          <Button size="sm" onPress={() => setEditing("new")}>
            <PlusIcon className="size-4" />
            Add event handler
          </Button>
        ) : undefined
      }
      description={
        <>
          What <span className="font-medium text-foreground">{namespace}</span> does on an event: an EVENT task&apos;s{" "}
          <code className="font-mono text-xs">conductor:&lt;workflow&gt;:&lt;queue&gt;</code>, a webhook&apos;s <code className="font-mono text-xs">webhook:&lt;name&gt;</code>, a run&apos;s{" "}
          <code className="font-mono text-xs">workflow:&lt;workflow&gt;:&lt;STATUS&gt;</code>. When its
          condition holds, its actions run: start a workflow, complete or fail a waiting task, terminate a run, update its variables.
        </>
      }
      icon={<ExecutionsIcon className="size-[18px]" />}
      id="event-handlers"
      title="Event handlers"
    >
      {editing !== null ? <EventHandlerForm key={editing === "new" ? "" : editing.name} handler={editing === "new" ? null : editing} namespace={namespace} onDone={() => setEditing(null)} /> : null}
      {handlers.isError && !handlers.data ? (
        <LoadError message={handlers.error.message} what="Event handlers" onRetry={() => void handlers.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState title="No event handlers yet">Start a workflow when another one publishes an event, or finish a waiting task when a webhook is called.</EmptyState>}
          label="Event handlers"
          loadingLabel="Loading event handlers"
          rowKey={(h) => h.name}
          rows={handlers.data}
        />
      )}
      {watching !== null ? <EventExecutions key={watching} name={watching} namespace={namespace} /> : null}
      <ConfirmDialog
        confirmLabel="Delete event handler"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete the event handler ${deleting?.name ?? ""}?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        Events from then on run nothing for it, and its record of executions goes with it. Runs it started keep running.
      </ConfirmDialog>
    </SectionCard>
  );
}

function actionKinds(actions: unknown): string {
  if (!Array.isArray(actions)) return "—";
  const kinds = (actions as unknown[]).map((a) => {
    const kind = typeof a === "object" && a !== null ? (a as { action?: unknown }).action : undefined;
    return typeof kind === "string" ? kind.replace(/_/g, " ") : "?";
  });
  return kinds.length === 0 ? "—" : kinds.join(", ");
}

/** What one handler did with its latest events: each start's run, each failure's reason. Refreshed every few seconds while open. */
function EventExecutions({ namespace, name }: { namespace: string; name: string }) {
  const trpc = useTRPC();
  const executions = useQuery({ ...trpc.eventHandlers.executions.queryOptions({ namespace, name, limit: 20 }), refetchInterval: 5000 });
  const columns: DataTableColumn<EventExecution>[] = [
    { id: "when", header: "When", isRowHeader: true, cell: (x) => <RelativeTime className="text-sm" iso={x.createdAt} /> },
    { id: "event", header: "Event id", hiddenBelow: "md", cell: (x) => <span className="font-mono text-sm">{x.eventId}</span> },
    {
      id: "status",
      header: "Status",
      cell: (x) => (
        <Chip color={EXECUTION_COLOR[x.status]} size="sm" variant="soft">
          {x.status}
        </Chip>
      ),
    },
    { id: "outcomes", header: "Outcome", cell: (x) => <Outcomes outcomes={x.outcomes} /> },
  ];
  return (
    <section aria-labelledby="event-executions-heading" className="border-t border-separator">
      <h3 className="px-5 pt-4 text-sm font-semibold" id="event-executions-heading">
        Latest executions of <code className="font-mono">{name}</code>
      </h3>
      {executions.isError && !executions.data ? (
        <LoadError message={executions.error.message} what="Executions" onRetry={() => void executions.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState compact title="No executions yet">Each event this handler receives is listed here, with what its actions did.</EmptyState>}
          label={`Executions of ${name}`}
          loadingLabel="Loading executions"
          rowKey={(x) => x.id}
          rows={executions.data}
        />
      )}
    </section>
  );
}

function Outcomes({ outcomes }: { outcomes: unknown }) {
  if (!Array.isArray(outcomes) || outcomes.length === 0) return <span className="text-sm text-muted">The condition did not hold</span>;
  return (
    <ul className="flex flex-col gap-0.5 text-sm">
      {(outcomes as { action?: unknown; ok?: unknown; workflowId?: unknown; error?: unknown }[]).map((o, i) => (
        <li key={i}>
          <span className="text-muted">{typeof o.action === "string" ? o.action.replace(/_/g, " ") : "action"}: </span>
          {o.ok === true ? (
            typeof o.workflowId === "string" ? (
              <Link className="font-mono text-accent hover:underline" href={`/executions/${o.workflowId}`}>
                {o.workflowId}
              </Link>
            ) : (
              "done"
            )
          ) : (
            <span className="text-danger">{typeof o.error === "string" ? o.error : "failed"}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

function parseActions(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `Actions must be JSON: ${(error as Error).message}` };
  }
}

function EventHandlerForm({ namespace, handler, onDone }: { namespace: string; handler: EventHandler | null; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const isNew = handler === null;
  const [name, setName] = useState(handler?.name ?? "");
  const [description, setDescription] = useState(handler?.description ?? "");
  const [event, setEvent] = useState(handler?.event ?? "");
  const [condition, setCondition] = useState(handler?.condition ?? "");
  const [actions, setActions] = useState(handler ? JSON.stringify(handler.actions, null, 2) : STARTER_ACTIONS);
  const [active, setActive] = useState(handler?.active ?? true);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const save = useMutation(
    trpc.eventHandlers.save.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.eventHandlers.pathFilter());
        onDone();
      },
    }),
  );
  const errors = useFormErrors(save.error);
  const fields = useMemo(() => (jsonError === null ? errors.fields : { ...errors.fields, actions: [jsonError] }), [errors.fields, jsonError]);
  return (
    <Form
      aria-label={isNew ? "Add an event handler" : `Edit ${handler.name}`}
      className="flex flex-col gap-4 border-b border-separator px-5 py-4"
      validationErrors={fields}
      onSubmit={(e) => {
        e.preventDefault();
        const parsed = parseActions(actions);
        if (!parsed.ok) {
          setJsonError(parsed.message);
          return;
        }
        setJsonError(null);
        save.mutate({
          namespace,
          isNew,
          name: name.trim(),
          description: description.trim() || null,
          event: event.trim(),
          condition: condition.trim() || null,
          evaluatorType: "javascript",
          // The server's schema checks each action and names the one that is wrong.
          actions: parsed.value as Parameters<typeof save.mutate>[0]["actions"],
          active,
        });
      }}
    >
      <FormAlert message={errors.form} title="The event handler was not saved" />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField autoFocus={isNew} isDisabled={!isNew} isRequired name="name" value={name} onChange={setName}>
          <Label>Name</Label>
          <Input className="font-mono" placeholder="start-shipping" />
          <Description>Letters, digits, _ . and -.</Description>
          <FieldError />
        </TextField>
        <TextField isRequired name="event" value={event} onChange={setEvent}>
          <Label>Event</Label>
          <Input className="font-mono" placeholder="conductor:orders:order_ready" />
          <Description>
            An EVENT task with sink <code className="font-mono">conductor:order_ready</code> in workflow <code className="font-mono">orders</code> publishes{" "}
            <code className="font-mono">conductor:orders:order_ready</code>.
          </Description>
          <FieldError />
        </TextField>
      </div>
      <TextField name="condition" value={condition} onChange={setCondition}>
        <Label>Condition</Label>
        <Input className="font-mono" placeholder="$.status == 'READY'" />
        <Description>JavaScript over the event&apos;s payload as $. Empty: every event of that name.</Description>
        <FieldError />
      </TextField>
      <TextField isRequired name="actions" value={actions} onChange={setActions}>
        <Label>Actions</Label>
        <TextArea className="font-mono text-xs" rows={7} spellCheck={false} />
        <Description>
          {"Conductor's actions as JSON: start_workflow, complete_task, fail_task, terminate_workflow, update_workflow_variables. ${orderId} reads the payload's orderId."}
        </Description>
        <FieldError />
      </TextField>
      <TextField name="description" value={description} onChange={setDescription}>
        <Label>Description</Label>
        <Input placeholder="Ships each order once it is ready" />
        <FieldError />
      </TextField>
      <Switch isSelected={active} onChange={setActive}>
        <Switch.Content>
          <Switch.Control>
            <Switch.Thumb />
          </Switch.Control>
          Active
        </Switch.Content>
      </Switch>
      <FormActions isPending={save.isPending} submitLabel={isNew ? "Add event handler" : "Save event handler"} onCancel={onDone} />
    </Form>
  );
}
