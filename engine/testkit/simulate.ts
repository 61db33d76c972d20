/**
 * simulate(): run a workflow to its end in memory, with the real `compile()`
 * and `decide()`, workers as plain functions and a virtual clock — unit tests
 * for workflows, with no server and no database.
 *
 * What stands in for what:
 * - the database is a {@link TaskStore}, which applies every command the way
 *   the Postgres evaluator does (identity-unique inserts, compare-and-set
 *   updates rolled back as one transaction, timers, variables, watermarks);
 * - the decide queue is a flag: a task update, a fired timer or
 *   `requestEvaluation` sets it, an evaluation clears it — so several
 *   completions can land before one evaluation sees them all, as in production;
 * - pollers and the system-task runner hand queued tasks to `workers` (or run
 *   INLINE through `options.scripts`), the timer poller fires timers when the
 *   virtual clock reaches them, and the clock jumps to the next thing due when
 *   nothing is ready now;
 * - with a `seed`, each step picks among everything ready at that instant
 *   (evaluate, hand out a task, deliver a result, fire a timer) with a seeded
 *   PRNG, so one seed explores one interleaving and reproduces it exactly.
 *
 * Not simulated: rate limits, concurrentExecLimit, output caching and lease
 * expiry (workers always answer; use `afterSeconds` to make them slow).
 */
import type { Blueprint, CompileOptions } from "../compile";
import { blueprintNode, compile } from "../compile";
import { decide } from "../decide";
import type { Command, Diagnostic, FiredTimer, TaskKey, TimerKind } from "../decide/types";
import type { TaskPolicy, WorkflowDefinition } from "../definition";
import { validateDefinition } from "../definition";
import type { ScriptEvaluator } from "../expressions";
import { isTerminalTaskStatus, isTerminalWorkflowStatus } from "../statuses";
import type { TaskStatus, WorkflowStatus } from "../statuses";
import type { EvaluatedEvent, HistoryEvent, HistoryWorkflow, TaskUpdateSource, TaskUpdatedEvent, WorkflowHistory } from "./history";
import { HISTORY_FORMAT, HISTORY_VERSION, describeCommand as describe, formatTaskKey } from "./history";
import type { Prng } from "./prng";
import { mulberry32 } from "./prng";
import type { SimulatedTask, TaskHandler, TaskOutcome, TaskResultLike } from "./task-results";
import { normalizeOutcome } from "./task-results";
import { SimulationSetupError, scriptsUnavailable } from "./setup-error";
import { compareCommands } from "./command-diff";
import type { StoreEffect, StoredTask } from "./task-store";
import { TaskStore } from "./task-store";

/** Epoch ms the virtual clock starts at unless `startTime` says otherwise: 2030-01-01T00:00:00Z. */
export const DEFAULT_START_TIME = 1_893_456_000_000;

/** Default bound on history events (evaluations, polls, reports, timer firings) before a run is declared non-terminating. */
export const DEFAULT_MAX_STEPS = 100_000;

/** Default bound on SUB_WORKFLOW nesting. */
export const DEFAULT_MAX_DEPTH = 8;

/** Workers keyed by task definition name (a SIMPLE node's `name`) or by task type (`HTTP`, `JSON_JQ_TRANSFORM`…). */
export type Workers = Readonly<Record<string, TaskHandler>>;

/** A handler, or the fixed result it would return. */
export type HandlerOrResult = TaskHandler | TaskResultLike;

/** Options of {@link simulate}. */
export interface SimulateOptions {
  /**
   * The sandbox for INLINE, SWITCH (javascript) and DO_WHILE conditions.
   * Required when the workflow has such scripts (and no worker stands in for
   * INLINE); `simulate` refuses to start without it rather than fail mid-run.
   */
  scripts?: ScriptEvaluator;
  /**
   * Completion order. Absent: a fixed order (evaluate as soon as something
   * changed, then results in arrival order). A number: every step picks at
   * random — seeded — among everything ready at that instant.
   */
  seed?: number;
  /** Bound on history events; past it the result has `error.code = "max-steps"`. Default {@link DEFAULT_MAX_STEPS}. */
  maxSteps?: number;
  /** Epoch ms of the start. Default {@link DEFAULT_START_TIME}. */
  startTime?: number;
  /** The workflow's id. Default `"wf"`; sub-workflows get `<parent>/<ref>.<iteration>.<attempt>`. */
  workflowId?: string;
  correlationId?: string;
  priority?: number;
  /** WAIT tasks completed by a signal, keyed by the WAIT's ref (a duration/until WAIT needs none: the clock ends it). */
  signals?: Readonly<Record<string, HandlerOrResult>>;
  /** HUMAN tasks, keyed by ref; falls back to `workers[name]`, then `workers.HUMAN`. */
  humans?: Readonly<Record<string, HandlerOrResult>>;
  /** Definitions SUB_WORKFLOW and dynamic-fork instances start, keyed `name` or `name:version`. Inline definitions need none. */
  subWorkflows?: Readonly<Record<string, WorkflowDefinition>>;
  /** Registered task definitions' policies by name, layered under each node's own (as `compile` does). */
  taskDefinitions?: Readonly<Record<string, TaskPolicy>>;
  /**
   * After every evaluation, decide again on the state its commands produced
   * and throw (`code: "not-idempotent"`) if that would insert any row — the
   * idempotence the evaluator relies on. Skipped after an evaluation that
   * asked for another one. Costs one extra decide per evaluation.
   */
  checkIdempotence?: boolean;
  /**
   * At every evaluation, also decide on a state that loads every ref's latest
   * row and throw (`code: "loading-insufficient"`) if the commands differ:
   * `refsToLoad` left out a row decide needed (invariant 6). Costs one extra
   * decide per evaluation.
   */
  checkLoading?: boolean;
  /** SUB_WORKFLOW nesting bound. Default {@link DEFAULT_MAX_DEPTH}. */
  maxDepth?: number;
  /** The decider to run. Default: today's `decide`. Pass another to try a candidate (or a deliberately broken one, to test the checks). */
  decide?: Decider;
}

/** decide's signature. */
export type Decider = typeof decide;

/** One task attempt as the run left it. */
export interface SimulatedTaskRecord {
  taskId: string;
  ref: string;
  iteration: number;
  attempt: number;
  taskType: string;
  taskDefName: string;
  status: TaskStatus;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  reasonForIncompletion?: string;
  scheduledAt: number;
  startedAt?: number;
  endedAt?: number;
  pollCount: number;
  parentRef?: string;
  forkIndex?: number;
  subWorkflowId?: string;
  /** Deleted by keepLastN pruning. */
  pruned?: boolean;
}

/** A workflow the run started without waiting for it (START_WORKFLOW, failureWorkflow). Not run. */
export interface StartedWorkflow {
  kind: "startWorkflow" | "failureWorkflow";
  workflowId?: string;
  name: string;
  version?: number;
  input: Record<string, unknown>;
  correlationId?: string;
  at: number;
}

/** Why a run stopped without reaching a terminal status. */
export interface SimulationStop {
  code: "max-steps" | "stuck" | "rolled-back" | "sub-workflow";
  message: string;
}

/** What {@link simulate} returns. */
export interface SimulationResult {
  workflowId: string;
  /** The workflow's status; RUNNING only when `error` says why the run stopped early. */
  status: WorkflowStatus;
  output: Record<string, unknown>;
  variables: Record<string, unknown>;
  reasonForIncompletion?: string;
  /** Every task attempt, in the order the rows were inserted. */
  tasks: SimulatedTaskRecord[];
  /** The recorded run: replay it with `replay()`, store it as a fixture. */
  history: WorkflowHistory;
  /** History events (evaluations, polls, reports, timer firings). */
  steps: number;
  /** Evaluations (decide calls). */
  evaluations: number;
  /** The virtual clock at the end, epoch ms. */
  now: number;
  error?: SimulationStop;
  /** Sub-workflow runs, in start order. */
  children: { key: TaskKey; result: SimulationResult }[];
  startedWorkflows: StartedWorkflow[];
  /** EVENT tasks' publications (when no worker handles EVENT). */
  events: { sink: string; payload: Record<string, unknown>; at: number }[];
  /** ALERT_ONLY timeouts decide reported. */
  alerts: { message: string; at: number }[];
  diagnostics: (Diagnostic & { evaluation: number })[];
  /** scheduleTask commands for an identity scheduled before in this run. Always empty for a correct decider. */
  duplicateSchedules: TaskKey[];
}

/**
 * Runs `definition` with `input` to a terminal status in memory, with the
 * real decider, and returns what happened: status, output, variables, every
 * task attempt, and the history `replay()` re-runs.
 *
 * @example
 * ```ts
 * import { failed, replay, simulate } from "@/engine";
 *
 * const result = await simulate(orderWorkflow, { orderId: "o-1" }, {
 *   reserve_stock: ({ input }) => ({ reserved: input.items }),
 *   // fails once, then succeeds: the retry is a new attempt
 *   charge_card: ({ attempt }) => (attempt === 0 ? failed("card declined") : { chargeId: "c-1" }),
 * });
 * expect(result.status).toBe("COMPLETED");
 * expect(result.tasks.filter((t) => t.ref === "charge").map((t) => t.status)).toEqual(["FAILED", "COMPLETED"]);
 * expect(replay(orderWorkflow, result.history)).toEqual({ ok: true, evaluations: result.evaluations });
 * ```
 *
 * Workers are looked up by the task's definition name, then by its type, and
 * receive a {@link SimulatedTask}; see `TaskResultLike` for what they return.
 * Retry delays, WAIT durations and timeouts pass on the virtual clock, so a
 * run of "days" takes milliseconds.
 *
 * Never hangs: a definition that does not terminate stops after `maxSteps`
 * history events with `error.code = "max-steps"`, and one that waits on
 * something nobody will deliver (a signal, a human) with `"stuck"`.
 *
 * @throws SimulationSetupError when the definition is invalid, or the run
 * needs a worker, scripts or a sub-workflow definition it was not given.
 */
export async function simulate(definition: WorkflowDefinition, input: Record<string, unknown> = {}, workers: Workers = {}, options: SimulateOptions = {}): Promise<SimulationResult> {
  return run(definition, input, workers, options, 0, undefined);
}

interface PendingReport {
  seq: number;
  at: number;
  taskId: string;
  key: TaskKey;
  source: TaskUpdateSource;
  update: Omit<TaskUpdatedEvent, "type" | "at" | "taskId" | "key" | "source">;
}

type Ready =
  | { kind: "evaluate" }
  | { kind: "hand-out"; task: StoredTask }
  | { kind: "external"; task: StoredTask }
  | { kind: "report"; report: PendingReport }
  | { kind: "timer"; timer: TimerKind; taskId: string | undefined };

const SCRIPT_TYPES = new Set(["javascript", "graaljs"]);

async function run(
  definitionInput: WorkflowDefinition,
  input: Record<string, unknown>,
  workers: Workers,
  options: SimulateOptions,
  depth: number,
  parent: { workflowId: string; parentWorkflowId: string; taskId: string; startTime: number; seed: number | undefined } | undefined,
): Promise<SimulationResult> {
  const validation = validateDefinition(definitionInput);
  if (!validation.ok) {
    const first = validation.problems.slice(0, 5).map((p) => `${p.code}${p.ref === undefined ? "" : ` at ${p.ref}`}: ${p.message}`);
    throw new SimulationSetupError("invalid-definition", `workflow ${JSON.stringify((definitionInput as { name?: unknown }).name)} is invalid:\n  ${first.join("\n  ")}`, validation.problems);
  }
  const definition = validation.definition;
  const compileOptions: CompileOptions = {};
  const taskDefs = options.taskDefinitions;
  if (taskDefs !== undefined) compileOptions.taskPolicy = (name) => (Object.prototype.hasOwnProperty.call(taskDefs, name) ? taskDefs[name] : undefined);
  const blueprint = compile(definition, compileOptions);
  const scripts = options.scripts ?? requireScripts(blueprint, workers);
  const decider = options.decide ?? decide;

  const workflowId = parent === undefined ? (options.workflowId ?? "wf") : parent.workflowId;
  const startTime = parent === undefined ? (options.startTime ?? DEFAULT_START_TIME) : parent.startTime;
  const seed = parent === undefined ? options.seed : parent.seed;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const start: HistoryWorkflow = {
    workflowId,
    name: definition.name,
    version: definition.version ?? null,
    input: jsonCopy(input),
    variables: jsonCopy(definition.variables ?? {}),
    startedAt: startTime,
  };
  if (options.correlationId !== undefined) start.correlationId = options.correlationId;
  if (options.priority !== undefined) start.priority = options.priority;
  if (parent !== undefined) {
    start.parentWorkflowId = parent.parentWorkflowId;
    start.parentWorkflowTaskId = parent.taskId;
  }

  const store = new TaskStore(blueprint, start);
  const prng: Prng | undefined = seed === undefined ? undefined : mulberry32(seed);
  const events: HistoryEvent[] = [];
  const result: Omit<SimulationResult, "status" | "output" | "variables" | "tasks" | "history" | "steps" | "now"> = {
    workflowId,
    evaluations: 0,
    children: [],
    startedWorkflows: [],
    events: [],
    alerts: [],
    diagnostics: [],
    duplicateSchedules: [],
  };
  let now = startTime;
  let pendingEvaluation = true;
  let firedTimers: FiredTimer[] = [];
  let reportSeq = 0;
  const reports: PendingReport[] = [];
  /** External tasks (HUMAN, WAIT by signal) and when their handler is next due. */
  const externalDue = new Map<string, number>();
  let error: SimulationStop | undefined;

  const report = (task: StoredTask, source: TaskUpdateSource, at: number, value: unknown): void => {
    const outcome = normalizeOutcome(value);
    const update: PendingReport["update"] = { status: outcome.status, output: outcome.output };
    if (outcome.reason !== undefined) update.reasonForIncompletion = outcome.reason;
    if (outcome.callbackAfterSeconds !== undefined) update.callbackAfterSeconds = outcome.callbackAfterSeconds;
    reports.push({ seq: reportSeq++, at: at + outcome.afterSeconds * 1000, taskId: task.taskId, key: keyOf(task), source, update });
  };

  const handlerFor = (task: StoredTask): { handler: HandlerOrResult; source: TaskUpdateSource } | undefined => {
    const own = (map: Readonly<Record<string, HandlerOrResult>> | undefined, key: string): HandlerOrResult | undefined =>
      map !== undefined && Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
    const name = task.taskDefName ?? task.taskType;
    if (task.executor === "external") {
      if (task.taskType === "WAIT") {
        const h = own(options.signals, task.ref);
        return h === undefined ? undefined : { handler: h, source: "signal" };
      }
      if (task.taskType === "HUMAN") {
        const h = own(options.humans, task.ref) ?? own(workers, name) ?? own(workers, "HUMAN");
        return h === undefined ? undefined : { handler: h, source: "human" };
      }
      return undefined;
    }
    const h = own(workers, name) ?? own(workers, task.taskType);
    if (h !== undefined) return { handler: h, source: task.executor === "system" ? "system" : "worker" };
    if (task.taskType === "INLINE") return { handler: (t: SimulatedTask) => runInline(t, blueprint, scripts), source: "system" };
    if (task.taskType === "EVENT") {
      return {
        handler: (t: SimulatedTask) => {
          const sink = typeof t.input.sink === "string" ? t.input.sink : "";
          result.events.push({ sink, payload: t.input, at: now });
          return { event_produced: sink, ...t.input };
        },
        source: "system",
      };
    }
    throw new SimulationSetupError(
      "missing-worker",
      `task ${formatTaskKey(task)} (type ${task.taskType}, name ${name}) has no worker: pass workers[${JSON.stringify(name)}]${name === task.taskType ? "" : ` or workers[${JSON.stringify(task.taskType)}]`}`,
    );
  };

  const callHandler = async (handler: HandlerOrResult, task: StoredTask): Promise<unknown> => {
    if (typeof handler !== "function") return handler;
    try {
      return await handler(simulatedTask(task, workflowId, now));
    } catch (e) {
      if (e instanceof SimulationSetupError) throw e;
      return { status: "FAILED", reason: e instanceof Error ? e.message : String(e) };
    }
  };

  const record = (event: HistoryEvent): void => {
    events.push(event);
  };

  const evaluate = async (): Promise<void> => {
    const fired = firedTimers;
    firedTimers = [];
    pendingEvaluation = false;
    const evaluation = ++result.evaluations;
    const state = store.evaluationState(fired);
    const decision = decideOrExplain(decider, blueprint, state, now, scripts, evaluation);
    if (options.checkLoading === true) {
      const full = decideOrExplain(decider, blueprint, store.evaluationState(fired, "everyRef"), now, scripts, evaluation);
      const difference = compareCommands(full.commands, decision.commands);
      if (difference !== undefined) {
        throw new SimulationSetupError("loading-insufficient", `evaluation ${evaluation}: refsToLoad left out a row decide reads. Comparing decide on every ref's latest row ("was") with decide on the refsToLoad state ("now"): ${difference}`);
      }
    }
    const applied = store.applyDecision(decision.commands, now);
    const event: EvaluatedEvent = { type: "evaluated", at: now, evaluation, firedTimers: fired, commands: jsonCopy(decision.commands), outcome: applied.ok ? "applied" : "rolledBack" };
    record(event);
    for (const d of decision.diagnostics) result.diagnostics.push({ ...d, evaluation });
    if (!applied.ok) {
      error = { code: "rolled-back", message: `evaluation ${evaluation} was rolled back: command ${applied.commandIndex} (${describe(decision.commands[applied.commandIndex])}) — ${applied.reason}` };
      return;
    }
    result.duplicateSchedules.push(...applied.duplicateSchedules);
    if (applied.needsEvaluation) pendingEvaluation = true;
    if (options.checkIdempotence === true && !applied.needsEvaluation) {
      const again = decideOrExplain(decider, blueprint, store.evaluationState(), now, scripts, evaluation);
      const fresh = store.newRowsFrom(again.commands);
      if (fresh.length > 0) {
        throw new SimulationSetupError(
          "not-idempotent",
          `deciding again after evaluation ${evaluation} (at +${(now - startTime) / 1000}s) would insert ${fresh.map(describe).join(", ")}`,
        );
      }
    }
    for (const effect of applied.effects) await carryOut(effect);
  };

  const carryOut = async (effect: StoreEffect): Promise<void> => {
    switch (effect.kind) {
      case "alert":
        result.alerts.push({ message: effect.command.message, at: now });
        return;
      case "failureWorkflow":
        result.startedWorkflows.push({ kind: "failureWorkflow", name: effect.start.name, input: effect.start.input, at: now });
        return;
      case "startWorkflow": {
        const c = effect.command;
        const started: StartedWorkflow = { kind: "startWorkflow", workflowId: effect.workflowId, name: c.name, input: c.input, at: now };
        if (c.version !== undefined) started.version = c.version;
        if (c.correlationId !== undefined) started.correlationId = c.correlationId;
        result.startedWorkflows.push(started);
        return;
      }
      case "terminateSubWorkflow":
        // The child already ran to its end (see startSubWorkflow); its result is simply never delivered.
        for (let i = reports.length - 1; i >= 0; i--) if (reports[i]!.taskId === effect.taskId) reports.splice(i, 1);
        return;
      case "startSubWorkflow": {
        const c = effect.command;
        const task = store.task(effect.taskId)!;
        if (depth + 1 > (options.maxDepth ?? DEFAULT_MAX_DEPTH)) {
          throw new SimulationSetupError("too-deep", `sub-workflow ${c.name} at ${formatTaskKey(c.key)} nests deeper than ${options.maxDepth ?? DEFAULT_MAX_DEPTH}`);
        }
        const childDefinition = (c.workflowDefinition as WorkflowDefinition | undefined) ?? findSubWorkflow(options.subWorkflows, c.name, c.version);
        if (childDefinition === undefined) {
          throw new SimulationSetupError(
            "missing-sub-workflow",
            `task ${formatTaskKey(c.key)} starts sub-workflow ${c.name}${c.version === undefined ? "" : ` version ${c.version}`}: pass options.subWorkflows[${JSON.stringify(c.name)}]`,
          );
        }
        // The child runs to its end now, on its own copy of the clock; its end is delivered to this task at the child's end time.
        const childSeed = seed === undefined ? undefined : (seed ^ Math.imul(result.children.length + 1, 0x9e3779b9)) >>> 0;
        const child = await run(childDefinition, c.input, workers, { ...options, correlationId: c.correlationId ?? options.correlationId, priority: c.priority }, depth + 1, {
          workflowId: effect.childWorkflowId,
          parentWorkflowId: workflowId,
          taskId: effect.taskId,
          startTime: now,
          seed: childSeed,
        });
        result.children.push({ key: c.key, result: child });
        if (child.error !== undefined) {
          error = { code: "sub-workflow", message: `sub-workflow ${effect.childWorkflowId}: ${child.error.message}` };
          return;
        }
        const outcome =
          child.status === "COMPLETED"
            ? { status: "COMPLETED", output: child.output }
            : child.status === "TIMED_OUT"
              ? { status: "FAILED", reason: `sub-workflow ${effect.childWorkflowId} timed out: ${child.reasonForIncompletion ?? ""}`, output: child.output }
              : { status: "FAILED", reason: `sub-workflow ${effect.childWorkflowId} ${child.status}: ${child.reasonForIncompletion ?? ""}`, output: child.output };
        report(task, "subWorkflow", child.now, outcome);
        return;
      }
    }
  };

  while (error === undefined && !isTerminalWorkflowStatus(store.workflow.status)) {
    if (events.length >= maxSteps) {
      error = { code: "max-steps", message: `no terminal status after ${maxSteps} steps (${result.evaluations} evaluations, virtual time +${(now - startTime) / 1000}s): the definition may not terminate; raise maxSteps if it is just long` };
      break;
    }
    const ready = collectReady();
    if (ready.length === 0) {
      const next = nextDue();
      if (next === undefined) {
        error = { code: "stuck", message: stuckMessage() };
        break;
      }
      now = Math.max(now, next);
      continue;
    }
    const pick = prng === undefined ? ready[0]! : ready[prng.below(ready.length)]!;
    await step(pick);
  }

  function collectReady(): Ready[] {
    const ready: Ready[] = [];
    if (pendingEvaluation) ready.push({ kind: "evaluate" });
    for (const r of [...reports].sort((a, b) => a.at - b.at || a.seq - b.seq)) if (r.at <= now) ready.push({ kind: "report", report: r });
    for (const t of store.timers()) if (t.fireAt <= now) ready.push({ kind: "timer", timer: t.kind, taskId: t.taskId });
    for (const task of store.frontier()) {
      if (isTerminalTaskStatus(task.status)) continue;
      if (task.queued && task.visibleAt <= now) ready.push({ kind: "hand-out", task });
      else if (task.executor === "external" && task.status === "IN_PROGRESS" && (task.taskType === "WAIT" || task.taskType === "HUMAN")) {
        // A delayed one (SCHEDULED until decide starts it) is not offered to its handler before it starts.
        const due = externalDue.get(task.taskId) ?? (handlerFor(task) === undefined ? undefined : (task.startedAt ?? task.scheduledAt));
        if (due !== undefined && !externalDue.has(task.taskId)) externalDue.set(task.taskId, due);
        if (due !== undefined && due !== Infinity && due <= now) ready.push({ kind: "external", task });
      }
    }
    return ready;
  }

  function nextDue(): number | undefined {
    let next: number | undefined;
    const consider = (t: number): void => {
      if (t > now && t !== Infinity && (next === undefined || t < next)) next = t;
    };
    for (const r of reports) consider(r.at);
    for (const t of store.timers()) consider(t.fireAt);
    for (const task of store.frontier()) {
      if (isTerminalTaskStatus(task.status)) continue;
      if (task.queued) consider(task.visibleAt);
      const due = externalDue.get(task.taskId);
      if (due !== undefined) consider(due);
    }
    return next;
  }

  function stuckMessage(): string {
    const waiting = store
      .frontier()
      .filter((t) => !isTerminalTaskStatus(t.status))
      .map((t) => {
        if (t.taskType === "WAIT") return `WAIT ${formatTaskKey(t)} waits for a signal: pass options.signals[${JSON.stringify(t.ref)}]`;
        if (t.taskType === "HUMAN") return `HUMAN ${formatTaskKey(t)} waits for a person: pass options.humans[${JSON.stringify(t.ref)}]`;
        return `${t.taskType} ${formatTaskKey(t)} is ${t.status} and nothing will change it`;
      });
    return `the workflow is RUNNING but nothing is pending (no task to hand out, no result, no timer)${waiting.length === 0 ? "" : `:\n  ${waiting.join("\n  ")}`}`;
  }

  async function step(pick: Ready): Promise<void> {
    switch (pick.kind) {
      case "evaluate":
        return evaluate();
      case "timer": {
        const fired = store.fireTimer(pick.timer, pick.taskId);
        if (fired === undefined) return;
        const event: HistoryEvent = { type: "timerFired", at: now, timer: fired.kind, fireAt: fired.fireAt };
        if (fired.key !== undefined) event.key = fired.key;
        if (fired.taskId !== undefined) event.taskId = fired.taskId;
        record(event);
        firedTimers.push(fired);
        pendingEvaluation = true;
        return;
      }
      case "hand-out": {
        const task = pick.task;
        const found = handlerFor(task)!;
        store.poll(task.taskId, now, "simulator");
        record({ type: "taskPolled", at: now, taskId: task.taskId, key: keyOf(task), workerId: "simulator" });
        const value = await callHandler(found.handler, store.task(task.taskId)!);
        report(task, found.source, now, value);
        return;
      }
      case "external": {
        const task = pick.task;
        const found = handlerFor(task)!;
        externalDue.set(task.taskId, Infinity);
        const value = await callHandler(found.handler, task);
        report(task, found.source, now, value);
        return;
      }
      case "report": {
        const r = pick.report;
        reports.splice(reports.indexOf(r), 1);
        const applied = store.update(r.taskId, r.update, now);
        record({ type: "taskUpdated", at: now, taskId: r.taskId, key: r.key, source: r.source, ...r.update });
        if (!applied) return;
        if (r.update.status === "IN_PROGRESS") {
          if (externalDue.has(r.taskId)) externalDue.set(r.taskId, now + (r.update.callbackAfterSeconds ?? 0) * 1000);
          return;
        }
        externalDue.delete(r.taskId);
        pendingEvaluation = true;
        return;
      }
    }
  }

  const w = store.workflow;
  const out: SimulationResult = {
    ...result,
    status: w.status,
    output: w.output,
    variables: w.variables,
    tasks: store.allTasks().map(taskRecord),
    history: { format: HISTORY_FORMAT, version: HISTORY_VERSION, workflow: start, events, final: { status: w.status, at: now } },
    steps: events.length,
    now,
  };
  if (w.reasonForIncompletion !== undefined) out.reasonForIncompletion = w.reasonForIncompletion;
  if (error !== undefined) out.error = error;
  return out;
}

/** decide, with a readable error when it throws (the property tests print it). */
function decideOrExplain(decider: Decider, blueprint: Blueprint, state: Parameters<Decider>[1], now: number, scripts: ScriptEvaluator, evaluation: number): { commands: Command[]; diagnostics: Diagnostic[] } {
  try {
    return decider(blueprint, state, now, { scripts });
  } catch (e) {
    if (e instanceof SimulationSetupError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(`decide threw in evaluation ${evaluation}: ${message}`, { cause: e });
  }
}

/**
 * Nodes that run scripts. With no `options.scripts`, simulate refuses to
 * start when there are any (INLINE only when no worker stands in for it),
 * and hands decide an evaluator that throws if it is reached anyway.
 */
function requireScripts(blueprint: Blueprint, workers: Workers): ScriptEvaluator {
  const needing: string[] = [];
  for (const node of Object.values(blueprint.nodes)) {
    const c = node.config;
    if (node.type === "INLINE" && !Object.prototype.hasOwnProperty.call(workers, node.taskDefName) && !Object.prototype.hasOwnProperty.call(workers, "INLINE")) needing.push(`INLINE ${node.ref}`);
    if (node.type === "SWITCH" && SCRIPT_TYPES.has(String(c.evaluatorType))) needing.push(`SWITCH ${node.ref} (${String(c.evaluatorType)})`);
    if (node.type === "DO_WHILE" && typeof c.loopCondition === "string") needing.push(`DO_WHILE ${node.ref} (loopCondition)`);
  }
  if (needing.length > 0) {
    throw new SimulationSetupError(
      "scripts-required",
      `workflow ${blueprint.name} runs scripts (${needing.join(", ")}): pass options.scripts, a ScriptEvaluator (server/ has the QuickJS sandbox)`,
    );
  }
  return scriptsUnavailable(blueprint.name);
}

/** The INLINE system task: `$` is the resolved input; the output is `{ result }` (Conductor's Inline). */
function runInline(task: SimulatedTask, blueprint: Blueprint, scripts: ScriptEvaluator): TaskOutcome {
  const expression = task.input.expression ?? blueprintNode(blueprint, task.ref)?.config.expression;
  const result = scripts.evaluate(String(expression), { $: task.input });
  return result.ok ? { status: "COMPLETED", output: { result: result.value } } : { status: "FAILED", reason: `INLINE: ${result.error}` };
}

function findSubWorkflow(map: SimulateOptions["subWorkflows"], name: string, version: number | undefined): WorkflowDefinition | undefined {
  if (map === undefined) return undefined;
  const own = (key: string): WorkflowDefinition | undefined => (Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined);
  return (version === undefined ? undefined : own(`${name}:${version}`)) ?? own(name);
}

function simulatedTask(task: StoredTask, workflowId: string, now: number): SimulatedTask {
  const t: SimulatedTask = {
    workflowId,
    taskId: task.taskId,
    ref: task.ref,
    iteration: task.iteration,
    attempt: task.attempt,
    taskType: task.taskType,
    taskDefName: task.taskDefName ?? task.taskType,
    input: structuredClone(task.input),
    output: structuredClone(task.output),
    pollCount: task.pollCount,
    now,
  };
  if (task.forkIndex !== undefined) t.forkIndex = task.forkIndex;
  if (task.parentRef !== undefined) t.parentRef = task.parentRef;
  return t;
}

function taskRecord(t: StoredTask): SimulatedTaskRecord {
  const r: SimulatedTaskRecord = {
    taskId: t.taskId,
    ref: t.ref,
    iteration: t.iteration,
    attempt: t.attempt,
    taskType: t.taskType,
    taskDefName: t.taskDefName ?? t.taskType,
    status: t.status,
    input: t.input,
    output: t.output,
    scheduledAt: t.scheduledAt,
    pollCount: t.pollCount,
  };
  if (t.reasonForIncompletion !== undefined) r.reasonForIncompletion = t.reasonForIncompletion;
  if (t.startedAt !== undefined) r.startedAt = t.startedAt;
  if (t.endedAt !== undefined) r.endedAt = t.endedAt;
  if (t.parentRef !== undefined) r.parentRef = t.parentRef;
  if (t.forkIndex !== undefined) r.forkIndex = t.forkIndex;
  if (t.subWorkflowId !== undefined) r.subWorkflowId = t.subWorkflowId;
  if (t.pruned === true) r.pruned = true;
  return r;
}

const keyOf = (t: { ref: string; iteration: number; attempt: number }): TaskKey => ({ ref: t.ref, iteration: t.iteration, attempt: t.attempt });

function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
