import type { Transaction } from "kysely";
import type { Db } from "@/db/pool";
import type { Database } from "@/db/schema";
import { isTerminalWorkflowStatus, resolveTemplateIn } from "../../engine";
import type { BlobStore } from "../lib/blob-store";
import { startNestedExecution } from "../executions/start-execution";
import {
  advanceSchedule,
  claimDueSchedule,
  claimQueuedSchedule,
  findScheduleRun,
  finishScheduleRun,
  insertScheduleRun,
  pruneScheduleRuns,
} from "../store/schedules";
import type { ScheduleRow } from "../store/schedules";
import { getWorkflowExecution } from "../store/workflow-executions";
import { decideOverlap, planFires } from "./plan-fires";
import type { GraceOptions } from "./plan-fires";

/**
 * The scheduler's pass, in the poller role (server/sidecar/runners.ts):
 * fires what is due, exactly once per (schedule, fire time) however many
 * sidecars run it and however often they restart.
 *
 * Each schedule is handled in its own transaction:
 * 1. claim it — due, not paused — FOR UPDATE SKIP LOCKED, so two pollers
 *    take different schedules and never the same fire;
 * 2. plan its due fires with the catch-up policy (plan-fires.ts);
 * 3. per fire, insert its ScheduleRuns row ON CONFLICT DO NOTHING — the
 *    unique (scheduleId, fireAt) is the fire's identity — and only when the
 *    row is new apply the overlap policy and start the run in the same
 *    transaction (startNestedExecution: the run, its WORKFLOW_STARTED and its
 *    decide). A crash before commit leaves neither the row nor the run, and
 *    the schedule still due; after commit, both, and the schedule advanced.
 * 4. advance "nextFireAt" past now.
 *
 * A schedule whose fire throws (its transaction rolls back, so nothing of it
 * is written) is left for the next pass and does not hold up the others in
 * this one; the pass then throws its first error, for the background runner
 * to count and log once per streak. A run started by a schedule names it:
 * "createdBy" is `schedule:<name>`.
 */

export interface FireSchedulesDeps {
  db: Db;
  /** Where an input over 256 KB goes (invariant 8); inline when absent. */
  blobs?: BlobStore;
  now?: () => Date;
  grace?: GraceOptions;
}

export interface FireSchedulesResult {
  /** Schedules handled (a full batch at `limit`). */
  handled: number;
  started: { scheduleId: string; fireAt: Date; workflowId: string }[];
}

export const SCHEDULE_CREATED_BY_PREFIX = "schedule:";

export async function fireDueSchedules(deps: FireSchedulesDeps, options: { limit: number }): Promise<number> {
  return (await fireDueScheduleBatch(deps, options)).handled;
}

export async function fireDueScheduleBatch(deps: FireSchedulesDeps, options: { limit: number }): Promise<FireSchedulesResult> {
  if (deps.db.isTransaction) throw new Error("fireDueSchedules opens a transaction per schedule: pass the pool, not a transaction");
  const clock = deps.now ?? (() => new Date());
  const handled: string[] = [];
  const started: FireSchedulesResult["started"] = [];
  let failure: unknown;
  for (const claim of [claimDueSchedule, claimQueuedSchedule] as const) {
    while (handled.length < options.limit) {
      // Read per schedule, not per pass: how late a fire is handled decides whether it was missed.
      const now = clock();
      let claimed: string | undefined;
      try {
        const done = await deps.db.transaction().execute(async (trx) => {
          const row = await claim(trx, { now, skip: handled });
          if (row === undefined) return false;
          claimed = row.id;
          started.push(...(await fireSchedule(trx, deps, row, now)));
          return true;
        });
        if (!done) break;
        handled.push(claimed!);
      } catch (error) {
        // The claim itself failing is the database failing: stop. A fire failing is that schedule's: go on without it.
        if (claimed === undefined) throw error;
        handled.push(claimed);
        failure ??= error;
      }
    }
  }
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error("a schedule's fire failed", { cause: failure });
  return { handled: handled.length, started };
}

type Trx = Transaction<Database>;

interface Previous {
  workflowId: string;
  running: boolean;
}

async function previousRun(trx: Trx, row: ScheduleRow, workflowId: string | null): Promise<Previous | null> {
  if (workflowId === null) return null;
  const run = await getWorkflowExecution(trx, row.namespaceId, workflowId);
  return { workflowId, running: run !== undefined && !isTerminalWorkflowStatus(run.status) };
}

/** The fires of one claimed schedule; what it started. */
async function fireSchedule(trx: Trx, deps: FireSchedulesDeps, row: ScheduleRow, now: Date): Promise<FireSchedulesResult["started"]> {
  const started: FireSchedulesResult["started"] = [];
  let lastWorkflowId = row.lastWorkflowId;
  let queuedFireAt = row.queuedFireAt;
  let nextFireAt = row.nextFireAt;

  // A queued fire starts first once the run it waited for has ended.
  if (queuedFireAt !== null) {
    const previous = await previousRun(trx, row, lastWorkflowId);
    if (previous === null || !previous.running) {
      const recorded = await findScheduleRun(trx, row.id, queuedFireAt);
      if (recorded !== undefined && recorded.outcome === "queued") {
        const workflowId = await startFire(trx, deps, row, recorded.id, queuedFireAt, now);
        if (workflowId !== null) {
          lastWorkflowId = workflowId;
          started.push({ scheduleId: row.id, fireAt: queuedFireAt, workflowId });
        }
      }
      queuedFireAt = null;
    }
  }

  if (nextFireAt !== null && nextFireAt.getTime() <= now.getTime()) {
    const plan = planFires({ ...row, nextFireAt }, now, deps.grace);
    const base = { scheduleId: row.id, namespaceId: row.namespaceId, handledAt: now };
    if (plan.skippedRange !== null) {
      const range = plan.skippedRange;
      await insertScheduleRun(trx, { ...base, fireAt: range.fireAt, throughFireAt: range.throughFireAt, fireCount: range.count, outcome: "skipped", reason: range.reason });
    }
    for (const skip of plan.skipped) await insertScheduleRun(trx, { ...base, fireAt: skip.fireAt, outcome: "skipped", reason: skip.reason });
    // The run this loop starts is RUNNING until the transaction commits; no need to read it back.
    let previous = await previousRun(trx, row, lastWorkflowId);
    const caughtUp = new Map(plan.caughtUp.map((c) => [c.fireAt.getTime(), c.reason]));
    for (const fireAt of plan.start) {
      const decision = decideOverlap(row.overlap, previous, queuedFireAt !== null);
      if (decision.action !== "start") {
        const outcome = decision.action === "queue" ? "queued" : "skipped";
        const id = await insertScheduleRun(trx, { ...base, fireAt, outcome, reason: decision.reason });
        if (id !== null && decision.action === "queue") queuedFireAt = fireAt;
        continue;
      }
      // Recorded before the start: a fire already recorded (by any process, ever) is not started again.
      const reason = caughtUp.get(fireAt.getTime()) ?? null;
      const id = await insertScheduleRun(trx, { ...base, fireAt, outcome: "started", reason });
      if (id === null) continue;
      const workflowId = await startFire(trx, deps, row, id, fireAt, now, reason);
      if (workflowId !== null) {
        lastWorkflowId = workflowId;
        previous = { workflowId, running: true };
        started.push({ scheduleId: row.id, fireAt, workflowId });
      }
    }
    nextFireAt = plan.nextFireAt;
  }

  // A queued fire still waiting changes nothing: no write, so looking every pass costs no dead tuple.
  const same = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);
  if (!same(nextFireAt, row.nextFireAt) || !same(queuedFireAt, row.queuedFireAt) || lastWorkflowId !== row.lastWorkflowId) {
    await advanceSchedule(trx, { id: row.id, nextFireAt, queuedFireAt, lastWorkflowId });
  }
  return started;
}

/** The template roots a schedule's input and correlation id read. */
export function fireRoots(row: Pick<ScheduleRow, "name" | "zoneId">, fireAt: Date, now: Date): Record<string, unknown> {
  return {
    scheduledTime: fireAt.getTime(),
    executedTime: now.getTime(),
    schedule: { name: row.name, fireTime: fireAt.toISOString(), zoneId: row.zoneId },
  };
}

/** Starts the run of one recorded fire and writes its outcome on the row; the run's id, or null when the start was refused. */
async function startFire(trx: Trx, deps: FireSchedulesDeps, row: ScheduleRow, runId: string, fireAt: Date, now: Date, note: string | null = null): Promise<string | null> {
  const roots = fireRoots(row, fireAt, now);
  const input = resolveTemplateIn(row.input, roots) ?? {};
  const correlation = row.correlationIdTemplate === null ? null : resolveTemplateIn(row.correlationIdTemplate, roots);
  const correlationId = correlation === null || correlation === undefined || correlation === "" ? null : (typeof correlation === "string" ? correlation : JSON.stringify(correlation)).slice(0, 255);
  const result = await startNestedExecution(trx, deps.blobs, {
    namespaceId: row.namespaceId,
    name: row.workflowName,
    version: row.workflowVersion ?? undefined,
    input,
    correlationId,
    priority: row.priority,
    createdBy: `${SCHEDULE_CREATED_BY_PREFIX}${row.name}`,
  });
  if (result.ok) {
    await finishScheduleRun(trx, { id: runId, outcome: "started", workflowId: result.workflowId, reason: note });
    return result.workflowId;
  }
  const reason =
    result.reason === "invalid-input"
      ? `the workflow refused the input: ${result.problems.map((p) => `${p.path.join(".") || "input"}: ${p.message}`).join("; ")}`
      : result.reason === "not-found"
        ? `the workflow ${row.workflowName}${row.workflowVersion === null ? "" : ` version ${row.workflowVersion}`} does not exist`
        : result.message;
  await finishScheduleRun(trx, { id: runId, outcome: "failed", workflowId: null, reason });
  return null;
}

/** ScheduleRuns are kept this long: the console shows the latest fires; the guard a row gives is for a fire time long passed. */
export const SCHEDULE_RUN_RETENTION_MS = 30 * 86_400_000;

export async function pruneOldScheduleRuns(db: Db, options: { now: Date; limit: number }): Promise<number> {
  return pruneScheduleRuns(db, { before: new Date(options.now.getTime() - SCHEDULE_RUN_RETENTION_MS), limit: options.limit });
}
