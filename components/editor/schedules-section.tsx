"use client";

import { Alert, Button, Chip, Description, FieldError, Form, Input, Label, Skeleton, Switch, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useDeferredValue, useEffect, useMemo, useState } from "react";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { useFormErrors } from "../form-errors";
import { OptionSelect } from "../option-select";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";
import { FormActions } from "../ui/form-actions";
import { FormAlert } from "../ui/form-alert";

type CatchUp = "skip" | "latest" | "all";
type Overlap = "allow" | "skip" | "queue";

const CATCH_UPS = [
  { id: "skip", label: "Skip missed fires" },
  { id: "latest", label: "Run the latest missed fire once" },
  { id: "all", label: "Run missed fires, up to a limit" },
] as const satisfies readonly { id: CatchUp; label: string }[];

const OVERLAPS = [
  { id: "allow", label: "Start anyway" },
  { id: "skip", label: "Skip the fire" },
  { id: "queue", label: "Queue one fire until it ends" },
] as const satisfies readonly { id: Overlap; label: string }[];

const OUTCOME_COLOR = { started: "success", queued: "warning", skipped: "default", failed: "danger" } as const;

interface Draft {
  name: string;
  cronExpression: string;
  zoneId: string;
  input: string;
  correlationIdTemplate: string;
  version: string;
  priority: string;
  catchUp: CatchUp;
  catchUpLimit: string;
  overlap: Overlap;
  paused: boolean;
}

function browserZone(): string {
  return typeof Intl === "undefined" ? "UTC" : Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function emptyDraft(): Draft {
  return { name: "", cronExpression: "0 2 * * *", zoneId: browserZone(), input: "{}", correlationIdTemplate: "", version: "", priority: "0", catchUp: "skip", catchUpLimit: "10", overlap: "allow", paused: false };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/** A fire time as the viewer reads it: in their own zone, with the weekday (a schedule's days matter). */
function FireTime({ iso }: { iso: string }) {
  const hydrated = useHydrated();
  const text = hydrated ? new Intl.DateTimeFormat(undefined, { weekday: "short", year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" }).format(new Date(iso)) : iso;
  return (
    <time dateTime={iso} suppressHydrationWarning>
      {text}
    </time>
  );
}

/**
 * A workflow's schedules in its Triggers drawer: each with its next five
 * fire times in the viewer's zone and its latest fires with the runs they
 * started (or why none), pause, resume and delete; and a form with a live
 * preview of the next fire times as the expression is typed, and what the
 * zone's DST changes do to it.
 */
export function SchedulesSection({ namespace, workflowName }: { namespace: string; workflowName: string }) {
  const trpc = useTRPC();
  const schedules = useQuery({ ...trpc.schedules.list.queryOptions({ namespace, workflowName }), refetchInterval: 5000 });
  const [editing, setEditing] = useState<Draft | null>(null);

  return (
    <section aria-labelledby="schedules-heading" className="flex flex-col gap-3">
      <div className="flex items-center gap-2">
        <h3 className="text-base font-semibold" id="schedules-heading">
          Schedules
        </h3>
        {editing === null ? (
          <Button className="ml-auto" size="sm" variant="secondary" onPress={() => setEditing(emptyDraft())}>
            Add schedule
          </Button>
        ) : null}
      </div>
      <p className="text-sm text-muted">Starts a run of {workflowName} on a cron expression, in a time zone. Times below are in your zone ({browserZone()}).</p>
      {editing !== null ? <ScheduleForm draft={editing} namespace={namespace} workflowName={workflowName} onDone={() => setEditing(null)} /> : null}
      {schedules.isError ? (
        <Alert status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>The schedules could not be loaded</Alert.Title>
            <Alert.Description>{schedules.error.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : schedules.isPending ? (
        <Skeleton className="h-16 rounded-lg" />
      ) : schedules.data.length === 0 && editing === null ? (
        <p className="rounded-lg border border-dashed border-separator px-3 py-4 text-center text-sm text-muted">No schedules yet.</p>
      ) : (
        <ul aria-label="Schedules" className="flex flex-col gap-2">
          {schedules.data.map((s) => (
            <ScheduleItem
              key={s.name}
              namespace={namespace}
              schedule={s}
              onEdit={() =>
                setEditing({
                  name: s.name,
                  cronExpression: s.cronExpression,
                  zoneId: s.zoneId,
                  input: JSON.stringify(s.input, null, 2),
                  correlationIdTemplate: s.correlationIdTemplate ?? "",
                  version: s.workflowVersion === null ? "" : String(s.workflowVersion),
                  priority: String(s.priority),
                  catchUp: s.catchUp,
                  catchUpLimit: String(s.catchUpLimit),
                  overlap: s.overlap,
                  paused: s.paused,
                })
              }
            />
          ))}
        </ul>
      )}
    </section>
  );
}

interface ScheduleView {
  name: string;
  cronExpression: string;
  zoneId: string;
  paused: boolean;
  pausedReason: string | null;
  catchUp: CatchUp;
  catchUpLimit: number;
  overlap: Overlap;
  workflowVersion: number | null;
  nextFireTimes: string[];
  lastFires: { id: string; fireAt: string; outcome: keyof typeof OUTCOME_COLOR; workflowId: string | null; reason: string | null; fireCount: number | null; throughFireAt: string | null }[];
}

function ScheduleItem({ namespace, schedule, onEdit }: { namespace: string; schedule: ScheduleView; onEdit: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const refresh = () => queryClient.invalidateQueries(trpc.schedules.pathFilter());
  const pause = useMutation(trpc.schedules.setPaused.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(
    trpc.schedules.delete.mutationOptions({
      onSuccess: async () => {
        setConfirming(false);
        await refresh();
      },
    }),
  );
  const catchUp = schedule.catchUp === "all" ? `catch up ${schedule.catchUpLimit}` : schedule.catchUp === "latest" ? "catch up latest" : "skip missed";
  const overlap = schedule.overlap === "allow" ? "overlap allowed" : schedule.overlap === "skip" ? "skip while running" : "queue one while running";

  return (
    <li className="rounded-lg border border-separator px-3 py-2" data-testid={`schedule-${schedule.name}`}>
      <div className="flex items-center gap-2">
        <span className="font-medium">{schedule.name}</span>
        <Chip color={schedule.paused ? "warning" : "success"} size="sm" variant="soft">
          {schedule.paused ? "paused" : "active"}
        </Chip>
        <div className="ml-auto flex gap-1">
          <Button size="sm" variant="ghost" onPress={onEdit}>
            Edit
          </Button>
          <Button isPending={pause.isPending} size="sm" variant="ghost" onPress={() => pause.mutate({ namespace, name: schedule.name, paused: !schedule.paused })}>
            {schedule.paused ? "Resume" : "Pause"}
          </Button>
          <Button size="sm" variant="ghost" onPress={() => setConfirming(true)}>
            Delete
          </Button>
        </div>
      </div>
      <p className="mt-1 text-xs text-muted">
        <code className="rounded bg-surface-secondary px-1">{schedule.cronExpression}</code> in {schedule.zoneId} · {catchUp} · {overlap}
        {schedule.workflowVersion === null ? "" : ` · version ${schedule.workflowVersion}`}
        {schedule.paused && schedule.pausedReason ? ` · ${schedule.pausedReason}` : ""}
      </p>
      {pause.error ? <p className="mt-1 text-xs text-danger">{pause.error.message}</p> : null}
      <div className="mt-2 grid gap-2 text-xs sm:grid-cols-2">
        <div>
          <h4 className="font-semibold text-muted">Next fires</h4>
          {schedule.nextFireTimes.length === 0 ? (
            <p className="text-muted">{schedule.paused ? "None while paused." : "None left."}</p>
          ) : (
            <ol aria-label={`Next fires of ${schedule.name}`} className="flex flex-col">
              {schedule.nextFireTimes.map((iso) => (
                <li key={iso}>
                  <FireTime iso={iso} />
                </li>
              ))}
            </ol>
          )}
        </div>
        <div>
          <h4 className="font-semibold text-muted">Last fires</h4>
          {schedule.lastFires.length === 0 ? (
            <p className="text-muted">Not fired yet.</p>
          ) : (
            <ol aria-label={`Last fires of ${schedule.name}`} className="flex flex-col gap-0.5">
              {schedule.lastFires.map((f) => (
                <li key={f.id} className="flex min-w-0 items-center gap-1" title={f.reason ?? undefined}>
                  <Chip color={OUTCOME_COLOR[f.outcome]} size="sm" variant="soft">
                    {f.outcome}
                  </Chip>
                  <RelativeTime className="text-muted" iso={f.fireAt} />
                  {f.workflowId !== null ? (
                    <Link className="truncate font-mono text-accent hover:underline" href={`/executions/${f.workflowId}`}>
                      {f.workflowId.slice(0, 8)}…
                    </Link>
                  ) : f.reason !== null ? (
                    <span className="truncate text-muted">{f.fireCount === 1 ? f.reason : `${f.fireCount ?? "many"} fires: ${f.reason}`}</span>
                  ) : null}
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
      <ConfirmDialog
        confirmLabel="Delete schedule"
        error={remove.error?.message ?? null}
        isOpen={confirming}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete ${schedule.name}?`}
        onConfirm={() => remove.mutate({ namespace, name: schedule.name })}
        onOpenChange={setConfirming}
      >
        <p>It stops firing at once, and its record of fires goes with it. Runs it started are kept.</p>
      </ConfirmDialog>
    </li>
  );
}

function SchedulePreview({ namespace, cronExpression, zoneId }: { namespace: string; cronExpression: string; zoneId: string }) {
  const trpc = useTRPC();
  const expression = useDeferredValue(cronExpression.trim());
  const zone = useDeferredValue(zoneId.trim());
  const preview = useQuery({ ...trpc.schedules.preview.queryOptions({ namespace, cronExpression: expression, zoneId: zone === "" ? "UTC" : zone, count: 5 }), enabled: expression !== "", placeholderData: (previous) => previous });
  const data = preview.data;
  return (
    <div aria-live="polite" className="flex flex-col gap-1 rounded-lg bg-surface-secondary p-2 text-xs" data-testid="schedule-preview">
      <span className="font-medium">Next fires, in your zone ({browserZone()})</span>
      {expression === "" ? (
        <p className="text-muted">Type a cron expression.</p>
      ) : data === undefined ? (
        <Skeleton className="h-12 rounded" />
      ) : !data.ok ? (
        data.problems.map((p) => (
          <p key={p.message} className="text-danger">
            {p.message}
          </p>
        ))
      ) : (
        <>
          <ol className="flex flex-col">
            {data.fireTimes.map((iso) => (
              <li key={iso}>
                <FireTime iso={iso} />
              </li>
            ))}
          </ol>
          {data.dstNotes.length > 0 ? (
            <div className="mt-1 flex flex-col gap-0.5 text-muted">
              <span className="font-medium text-foreground">Daylight saving time</span>
              {data.dstNotes.map((note) => (
                <p key={note}>{note}</p>
              ))}
            </div>
          ) : null}
        </>
      )}
    </div>
  );
}

function ScheduleForm({ namespace, workflowName, draft, onDone }: { namespace: string; workflowName: string; draft: Draft; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<Draft>(draft);
  const isNew = draft.name === "";
  useEffect(() => setForm(draft), [draft]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setForm((f) => ({ ...f, [key]: value }));
  const input = useMemo(() => parseJson(form.input), [form.input]);

  const save = useMutation(
    trpc.schedules.save.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.schedules.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form: formError } = useFormErrors(save.error);
  const validationErrors = input.ok ? fields : { ...fields, input: [`Not JSON: ${input.message}`] };

  function submit() {
    if (!input.ok) return;
    save.mutate({
      namespace,
      name: form.name.trim(),
      config: {
        workflowName,
        workflowVersion: form.version.trim() === "" ? null : Number(form.version),
        cronExpression: form.cronExpression.trim(),
        zoneId: form.zoneId.trim() === "" ? "UTC" : form.zoneId.trim(),
        input: input.value,
        correlationIdTemplate: form.correlationIdTemplate.trim() === "" ? null : form.correlationIdTemplate.trim(),
        priority: Number(form.priority) || 0,
        catchUp: form.catchUp,
        catchUpLimit: Number(form.catchUpLimit) || 10,
        overlap: form.overlap,
        paused: form.paused,
      },
    });
  }

  return (
    <Form
      aria-label={isNew ? "New schedule" : `Edit schedule ${draft.name}`}
      className="flex flex-col gap-4 rounded-lg border border-accent/40 p-3"
      validationErrors={validationErrors}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <FormAlert message={formError} title="The schedule was not saved" />
      <TextField isDisabled={!isNew} isRequired name="name" value={form.name} onChange={(v) => set("name", v)}>
        <Label>Name</Label>
        <Input placeholder="nightly-report" />
        <Description>Letters, digits, - and _.</Description>
        <FieldError />
      </TextField>
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField isRequired name="cronExpression" value={form.cronExpression} onChange={(v) => set("cronExpression", v)}>
          <Label>Cron expression</Label>
          <Input className="font-mono" placeholder="0 2 * * *" />
          <Description>5 fields, 6 with seconds first, or @hourly, @daily, @weekly.</Description>
          <FieldError />
        </TextField>
        <TextField isRequired name="zoneId" value={form.zoneId} onChange={(v) => set("zoneId", v)}>
          <Label>Time zone</Label>
          <Input className="font-mono" placeholder="Europe/Berlin" />
          <Description>An IANA zone; the expression is read in it.</Description>
          <FieldError />
        </TextField>
      </div>
      <SchedulePreview cronExpression={form.cronExpression} namespace={namespace} zoneId={form.zoneId} />
      <TextField name="input" value={form.input} onChange={(v) => set("input", v)}>
        <Label>Run input</Label>
        <TextArea className="font-mono text-xs" rows={4} spellCheck={false} />
        <Description>{"JSON; ${schedule.fireTime} (ISO), ${scheduledTime} and ${executedTime} (epoch ms) are filled in at each fire."}</Description>
        <FieldError />
      </TextField>
      <div className="grid gap-4 sm:grid-cols-3">
        <TextField name="correlationIdTemplate" value={form.correlationIdTemplate} onChange={(v) => set("correlationIdTemplate", v)}>
          <Label>Correlation id</Label>
          <Input className="font-mono" placeholder="nightly-${scheduledTime}" />
          <FieldError />
        </TextField>
        <TextField name="workflowVersion" value={form.version} onChange={(v) => set("version", v)}>
          <Label>Version</Label>
          <Input inputMode="numeric" placeholder="latest" />
          <FieldError />
        </TextField>
        <TextField name="priority" value={form.priority} onChange={(v) => set("priority", v)}>
          <Label>Priority</Label>
          <Input inputMode="numeric" />
          <FieldError />
        </TextField>
      </div>
      <div className="grid gap-4 sm:grid-cols-2">
        <OptionSelect label="After downtime" options={CATCH_UPS} value={form.catchUp} onChange={(v) => set("catchUp", v)} />
        {form.catchUp === "all" ? (
          <TextField name="catchUpLimit" value={form.catchUpLimit} onChange={(v) => set("catchUpLimit", v)}>
            <Label>Run at most</Label>
            <Input inputMode="numeric" />
            <Description>The latest missed fires; older ones are skipped.</Description>
            <FieldError />
          </TextField>
        ) : null}
        <OptionSelect label="While the previous run is running" options={OVERLAPS} value={form.overlap} onChange={(v) => set("overlap", v)} />
      </div>
      <Switch isSelected={form.paused} onChange={(v) => set("paused", v)}>
        <Switch.Content>
          <Switch.Control>
            <Switch.Thumb />
          </Switch.Control>
          Paused
        </Switch.Content>
      </Switch>
      <FormActions isPending={save.isPending} submitLabel={isNew ? "Create schedule" : "Save schedule"} onCancel={onDone} />
    </Form>
  );
}
