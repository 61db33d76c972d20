"use client";

import { Alert, Button, Chip, Disclosure, Skeleton, buttonVariants } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowLeft, ExternalLink } from "lucide-react";
import type { Route } from "next";
import Link from "next/link";
import { useState } from "react";
import { AssigneePicker } from "../forms/assignee-picker";
import { HumanTaskForm } from "../forms/human-task-form";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";
import type { ActionFailure } from "./inbox-model";
import { describeFailure, dueText, statusLabel } from "./inbox-model";

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One task: who it is for and until when, claim and release, the form with
 * its outcomes, the run's context (input and variables, read-only) and what
 * was submitted so far. A refusal says why in plain words — someone else
 * completed it, you started the run, it is not yours — and a schema failure
 * lands on the fields.
 */
export function TaskDetail({ namespace, id, backHref }: { namespace: string; id: string; backHref: Route }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const hydrated = useHydrated();
  const task = useQuery(trpc.humanTasks.get.queryOptions({ namespace, id }));
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [pendingOutcome, setPendingOutcome] = useState<string | null>(null);

  const refresh = () => queryClient.invalidateQueries(trpc.humanTasks.pathFilter());
  const claim = useMutation(
    trpc.humanTasks.claim.mutationOptions({
      onMutate: () => setFailure(null),
      onError: (e) => setFailure(describeFailure(e, "claim")),
      onSettled: refresh,
    }),
  );
  const release = useMutation(
    trpc.humanTasks.release.mutationOptions({
      onMutate: () => setFailure(null),
      onError: (e) => setFailure(describeFailure(e, "release")),
      onSettled: refresh,
    }),
  );
  const [reassigning, setReassigning] = useState<string | null>(null);
  const reassign = useMutation(
    trpc.humanTasks.reassign.mutationOptions({
      onMutate: () => setFailure(null),
      onSuccess: () => setReassigning(null),
      onError: (e) => setFailure(describeFailure(e, "reassign")),
      onSettled: refresh,
    }),
  );
  const submit = useMutation(
    trpc.humanTasks.submit.mutationOptions({
      onMutate: () => {
        setFailure(null);
        setDone(null);
      },
      onSuccess: (result) => {
        setDone(
          result.status === "COMPLETED"
            ? "Completed. The run goes on with your answer."
            : `Your approval is recorded (${result.item.approvalsGiven} of ${result.item.approvalsRequired}). The task stays open for the others.`,
        );
      },
      onError: (e) => setFailure(describeFailure(e, "submit")),
      onSettled: () => {
        setPendingOutcome(null);
        return refresh();
      },
    }),
  );

  const back = (
    <Link className={`${buttonVariants({ variant: "ghost", size: "sm" })} -ml-2 self-start md:hidden`} href={backHref} scroll={false}>
      <ArrowLeft aria-hidden className="size-4" />
      Back to the list
    </Link>
  );

  if (task.isPending) {
    return (
      <div className="flex flex-col gap-3">
        {back}
        <Skeleton className="h-8 w-2/3 rounded-lg" />
        <Skeleton className="h-48 rounded-xl" />
      </div>
    );
  }
  if (task.error) {
    return (
      <div className="flex flex-col gap-3">
        {back}
        <Alert status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{task.error.data?.code === "NOT_FOUND" ? "No such task in this namespace" : "The task could not be read"}</Alert.Title>
            <Alert.Description>{task.error.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      </div>
    );
  }

  const t = task.data;
  const open = t.status === "PENDING" || t.status === "CLAIMED";
  const due = hydrated ? dueText(t.dueAt, t.overdue, new Date()) : null;
  const schema = isRecord(t.schema) ? t.schema : { type: "object", properties: {} };
  const uiSchema = isRecord(t.uiSchema) ? t.uiSchema : {};
  const closedData = isRecord(t.response) ? t.response : {};
  const formData = open ? (isRecord(t.formData) ? t.formData : {}) : closedData;
  const busy = claim.isPending || release.isPending || submit.isPending || reassign.isPending;

  return (
    <article aria-label={t.title} className="flex min-w-0 flex-col gap-5" data-task-status={t.status}>
      {back}
      <header className="flex min-w-0 flex-col gap-2">
        <div className="flex min-w-0 flex-wrap items-start gap-2">
          <h2 className="min-w-0 flex-1 text-xl font-semibold tracking-tight break-words text-foreground">{t.title}</h2>
          <Chip color={t.status === "COMPLETED" ? "success" : open ? "accent" : "default"} size="sm" variant="soft">
            {statusLabel(t.status)}
          </Chip>
          {t.overdue && open ? (
            <Chip color="danger" size="sm" variant="soft">
              Overdue
            </Chip>
          ) : null}
        </div>
        {t.description ? <p className="text-sm leading-6 break-words text-muted">{t.description}</p> : null}
        <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
          <dt className="text-muted">Run</dt>
          <dd className="min-w-0">
            <Link className="inline-flex max-w-full items-center gap-1 text-accent hover:underline" href={`/executions/${t.workflowId}` as Route}>
              <span className="truncate">
                {t.workflowName} · {t.refName}
              </span>
              <ExternalLink aria-hidden className="size-3.5 shrink-0" />
            </Link>
          </dd>
          <dt className="text-muted">For</dt>
          <dd className="min-w-0 break-words">{t.assignee.label}</dd>
          {t.claimedBy ? (
            <>
              <dt className="text-muted">Claimed by</dt>
              <dd className="min-w-0 break-words">{t.claimedBy.email}</dd>
            </>
          ) : null}
          {t.dueAt ? (
            <>
              <dt className="text-muted">Due</dt>
              <dd className={t.overdue && open ? "font-medium text-danger" : ""}>{due}</dd>
            </>
          ) : null}
          <dt className="text-muted">Opened</dt>
          <dd>
            <RelativeTime iso={t.createdAt} />
          </dd>
          {t.approvalsRequired > 1 ? (
            <>
              <dt className="text-muted">Approvals</dt>
              <dd>
                {t.approvalsGiven} of {t.approvalsRequired}
              </dd>
            </>
          ) : null}
          {t.completedBy || t.completedAt ? (
            <>
              <dt className="text-muted">Completed</dt>
              <dd className="min-w-0 break-words">
                {t.completedBy ? `by ${t.completedBy.email}` : "by escalation"}
                {t.completedAt ? (
                  <>
                    {" "}
                    <RelativeTime iso={t.completedAt} />
                  </>
                ) : null}
              </dd>
            </>
          ) : null}
        </dl>
        {open && (t.can.claim || t.can.release || t.can.reassign) ? (
          <div className="flex flex-wrap gap-2 pt-1">
            {t.can.claim ? (
              <Button isDisabled={busy} isPending={claim.isPending} size="sm" variant="secondary" onPress={() => claim.mutate({ namespace, id })}>
                Claim
              </Button>
            ) : null}
            {t.can.release ? (
              <Button isDisabled={busy} isPending={release.isPending} size="sm" variant="secondary" onPress={() => release.mutate({ namespace, id })}>
                Release
              </Button>
            ) : null}
            {t.can.reassign && reassigning === null ? (
              <Button isDisabled={busy} size="sm" variant="ghost" onPress={() => setReassigning(t.assignee.kind === "anyone" ? "anyone" : `${t.assignee.kind}:`)}>
                Reassign
              </Button>
            ) : null}
          </div>
        ) : null}
        {open && t.can.reassign && reassigning !== null ? (
          <form
            aria-label="Reassign the task"
            className="flex flex-col gap-2 rounded-xl border border-separator p-3"
            onSubmit={(e) => {
              e.preventDefault();
              reassign.mutate({ namespace, id, assignee: reassigning });
            }}
          >
            <AssigneePicker allowExpression={false} label="New assignee" readOnly={reassign.isPending} value={reassigning} onChange={(text) => setReassigning(text ?? "anyone")} />
            <div className="flex gap-2">
              <Button isPending={reassign.isPending} size="sm" type="submit">
                Reassign
              </Button>
              <Button isDisabled={reassign.isPending} size="sm" variant="secondary" onPress={() => setReassigning(null)}>
                Cancel
              </Button>
            </div>
          </form>
        ) : null}
      </header>

      {failure ? (
        <Alert role="alert" status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{failure.title}</Alert.Title>
            <Alert.Description>{failure.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}
      {done ? (
        <Alert role="status" status="success">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{done}</Alert.Title>
            <Alert.Description>
              <Link className="text-accent hover:underline" href={`/executions/${t.workflowId}` as Route}>
                Watch the run
              </Link>
            </Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}
      {open && !t.can.submit && t.can.reason ? (
        <Alert status="warning">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>You cannot complete this task</Alert.Title>
            <Alert.Description>{t.can.reason}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}

      <section aria-label="Form" className="min-w-0 rounded-xl border border-separator bg-surface p-4 sm:p-5">
        {/* Remounted only when the task closes (to show what was submitted): claiming it keeps what was typed. */}
        <HumanTaskForm
          key={`${t.id}:${open ? "open" : "closed"}`}
          disabled={!open || !t.can.submit || submit.isPending}
          fieldErrors={failure?.fieldErrors}
          formData={formData}
          hideButtons={!open}
          outcomes={t.outcomes}
          pendingOutcome={pendingOutcome}
          schema={schema}
          uiSchema={uiSchema}
          onSubmit={(outcome, data) => {
            setPendingOutcome(outcome ?? "");
            submit.mutate({ namespace, id, data, ...(outcome !== undefined ? { outcome } : {}) });
          }}
        />
        {!open && isRecord(t.response) && typeof t.response.outcome === "string" ? (
          <p className="mt-4 border-t border-separator pt-3 text-sm text-muted">
            Outcome: <span className="font-medium text-foreground">{t.response.outcome}</span>
          </p>
        ) : null}
      </section>

      {t.submissions.length > 0 ? (
        <section aria-label="Submissions" className="flex flex-col gap-2">
          <h3 className="text-[11px] font-semibold tracking-wide text-muted uppercase">Submissions</h3>
          <ul className="flex flex-col gap-1 text-sm">
            {t.submissions.map((s, i) => (
              <li key={i} className="flex min-w-0 flex-wrap gap-x-2">
                <span className="break-all text-foreground">{s.email}</span>
                <span className="text-muted">{s.outcome ?? "submitted"}</span>
                <RelativeTime className="text-muted" iso={s.at} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <Disclosure className="rounded-xl border border-separator">
        <Disclosure.Heading>
          <Disclosure.Trigger className="flex w-full items-center gap-2 px-3 py-2.5 text-left text-sm font-medium text-foreground">
            <span className="flex-1">Run context</span>
            <Disclosure.Indicator />
          </Disclosure.Trigger>
        </Disclosure.Heading>
        <Disclosure.Content>
          <Disclosure.Body className="flex flex-col gap-3 px-3 pb-3">
            <JsonBlock label="Workflow input" value={t.context.workflowInput} />
            <JsonBlock label="Variables" value={t.context.variables} />
          </Disclosure.Body>
        </Disclosure.Content>
      </Disclosure>
    </article>
  );
}

function JsonBlock({ label, value }: { label: string; value: unknown }) {
  const empty = !isRecord(value) || Object.keys(value).length === 0;
  return (
    <div className="flex min-w-0 flex-col gap-1">
      <span className="text-xs font-medium text-muted">{label}</span>
      {empty ? (
        <p className="text-xs text-muted">None.</p>
      ) : (
        <pre aria-label={label} className="max-h-64 overflow-auto rounded-lg bg-default px-3 py-2 font-mono text-xs break-all whitespace-pre-wrap text-foreground">
          {JSON.stringify(value, null, 2)}
        </pre>
      )}
    </div>
  );
}
