/**
 * The decider. Semantic decisions, in one place:
 *
 * - **Task identity** is `(ref, iteration, attempt)` (invariant 5). Loops put the
 *   iteration (1, 2, …) in identity and keep the ref; dynamic-fork instances get
 *   their own ref, `forkInstanceRef(fork, k)` = `"<fork>#<k>"` (no node ref can
 *   contain `#`), with `parentRef`/`forkIndex` on the row. New rows are named by
 *   key; the shell assigns ids.
 * - **Readiness with partial state.** A node runs when every incoming edge is
 *   resolved and one was taken; it is skipped (a SKIPPED row) when all are
 *   resolved and none was taken. Each predecessor's latest row at the node's
 *   iteration decides its edge: COMPLETED/COMPLETED_WITH_ERRORS → taken (off a
 *   SWITCH only the selected case's edges), SKIPPED → not taken, no row or not
 *   terminal or a failure awaiting its retry → unresolved. A row decide needed
 *   but was not given reads as unresolved, so missing data can only delay a
 *   decision, never make a wrong one; `refsToLoad` names every row it can need,
 *   which the property tests check against a state holding every row.
 * - **Every reached node gets a row in the evaluation that resolves its last
 *   incoming edge** (scheduled, resolved on the spot, or skipped). Hence
 *   **completion**: when, after this evaluation, no task is in flight (no
 *   non-terminal row in the frontier or created now), nothing can ever run
 *   again, and the workflow completes — no global view needed.
 * - **Retries** are new attempts scheduled at once with `runAt` = now + delay
 *   (the queue's visibleAt), so the frontier always shows a pending retry and
 *   no timer is needed for it. A task nothing polls (external: SUB_WORKFLOW,
 *   WAIT, HUMAN, START_WORKFLOW) with a start or retry delay is scheduled
 *   SCHEDULED with a `startDelay`/`retry` timer at `runAt`; the evaluation it
 *   wakes starts it (`startTask` plus the start's side effects).
 * - **totalTimeoutSeconds** runs from the first attempt's `scheduledAt`,
 *   carried forward on every retry (`firstScheduledAt`): no retry is scheduled
 *   that could not start before it, and a queued attempt past it is timed out
 *   per timeoutPolicy (a `taskTimeout` timer wakes the decider then).
 * - **Deadlines** are re-derived from rows and the policy against `now`;
 *   timers only wake the decider (a stale one is harmless).
 */
import type { EffectiveTaskPolicy } from "../definition";
import { AGENT_MAX_TOOL_CALLS_PER_TURN, DEFAULT_CASE, REF_PATTERN, SYSTEM_QUEUE_NAMES, agentApprovalRef, agentLlmRef, agentToolRef, parseAgentChildRef } from "../definition";
import type { ExpressionContext, TaskView } from "../expressions";
import { doWhileConditionInput, resolveTemplate, scriptResultToBoolean } from "../expressions";
import type { TaskStatus } from "../statuses";
import { isTerminalTaskStatus } from "../statuses";
import { blueprintNode } from "../compile/compile";
import { forkInstanceRef, parseForkInstanceRef } from "../compile/refs-to-load";
import type { Blueprint, BlueprintEdge, BlueprintNode } from "../compile/types";
import { attemptDelaySeconds, parseWaitUntil, retryDelaySeconds, waitDurationSeconds } from "./policy";
import { isForkInstanceDone } from "./fork-output";
import { nodeInputTemplate } from "./dispatch-template";
import { addUsage, agentAnswer, agentLimits, agentTools, approvalInput, firstTurnInput, isApproved, nextTurnInput, notApprovedText, toolCallsOf, toolResultText, toolTask, usageOf } from "./agent";
import type {
  Command,
  DecideDeps,
  Decision,
  Diagnostic,
  EvaluationState,
  FailureWorkflowStart,
  ScheduleTaskCommand,
  TaskExecutor,
  TaskKey,
  TaskPolicySnapshot,
  TaskSnapshot,
  WorkflowEndCommand,
} from "./types";

/**
 * How many DO_WHILE iterations one evaluation may advance. A loop whose body
 * decide resolves on its own (NOOP, SWITCH, SET_VARIABLE…) could otherwise spin
 * inside a single evaluation forever; past this many it stops and asks for
 * another evaluation (`requestEvaluation`), which resumes where it stopped.
 */
export const MAX_LOOP_ADVANCES_PER_EVALUATION = 100;

/** Input key under which a WAIT's resolved deadline (epoch ms) is kept in its input, so later evaluations need no clock arithmetic on row times. */
export const WAIT_UNTIL_KEY = "waitUntil";

/**
 * The pure decider. Given a workflow's blueprint, the rows one evaluation
 * loaded (invariant 6) and the time, it returns the commands that move the
 * workflow on. No I/O, no clock, no randomness: the same arguments give the
 * same commands, which is what makes replay tests meaningful.
 *
 * One call runs to a fixpoint: nodes decide resolves itself (NOOP, SWITCH,
 * JOIN, SET_VARIABLE, dead paths…) cascade within the call, so applying the
 * commands and deciding again at the same `now` schedules nothing new — the
 * idempotence property the tests check. Rows are identified by `(ref,
 * iteration, attempt)` (invariant 5); see `TaskKey`.
 *
 * What it reacts to, in order: the workflow timeout; the start (no start node
 * has a row); deadlines of in-flight tasks (WAIT timers, poll and run
 * timeouts); every terminal task not yet seen (invariant 4) — retry as a new
 * attempt, optional failure as COMPLETED_WITH_ERRORS, final failure fails the
 * workflow, success releases successors; then loops and forks in flight.
 * When nothing is left in flight, the workflow completes with its
 * outputParameters (or the last finished task's output, as Conductor does).
 * Paused and finished workflows get no commands.
 */
export function decide(blueprint: Blueprint, state: EvaluationState, now: number, deps: DecideDeps): Decision {
  if (state.workflow.status !== "RUNNING") return { commands: [], diagnostics: [] };
  const evaluation = new Evaluation(blueprint, state, now, deps);
  evaluation.run();
  return evaluation.result();
}

/** A row in the evaluation's working view: a copy of a snapshot, or one this evaluation created. */
interface Row {
  taskId: string | undefined;
  ref: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  taskType: string;
  taskDefName: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  reasonForIncompletion: string | undefined;
  scheduledAt: number;
  /** The first attempt's scheduledAt when this is a retry that carried it (see TaskSnapshot.firstScheduledAt). */
  firstScheduledAt: number | undefined;
  startedAt: number | undefined;
  endedAt: number | undefined;
  seen: boolean;
  parentRef: string | undefined;
  forkIndex: number | undefined;
  timeoutSeconds: number | undefined;
  pollTimeoutSeconds: number | undefined;
  /** Created by this evaluation (its scheduleTask/completeTask/skipTask inserts it). */
  created: boolean;
}

type Work = { kind: "eval"; ref: string; iteration: number } | { kind: "loop"; ref: string } | { kind: "fork"; ref: string; iteration: number } | { kind: "agent"; ref: string };

type Json = Record<string, unknown>;

const SYSTEM_TYPES: ReadonlySet<string> = SYSTEM_QUEUE_NAMES;
const EXTERNAL_TYPES: ReadonlySet<string> = new Set(["WAIT", "HUMAN", "SUB_WORKFLOW", "START_WORKFLOW"]);
const DECIDER_TYPES: ReadonlySet<string> = new Set(["DO_WHILE", "FORK_JOIN_DYNAMIC", "AGENT"]);
/** Instance types a Conductor-form dynamic fork may run. */
const FORK_INSTANCE_TYPES: ReadonlySet<string> = new Set(["SIMPLE", "HTTP", "INLINE", "JSON_JQ_TRANSFORM", "SUB_WORKFLOW"]);

/** A new row's status: queued tasks wait SCHEDULED on their queue; external ones too while delayed; the rest start at once. */
function initialStatus(executor: TaskExecutor, delaySeconds: number): "SCHEDULED" | "IN_PROGRESS" {
  return executor === "worker" || executor === "system" || (executor === "external" && delaySeconds > 0) ? "SCHEDULED" : "IN_PROGRESS";
}

/** Who runs a task of this type (see `TaskExecutor`). */
export function executorOf(taskType: string): TaskExecutor {
  if (SYSTEM_TYPES.has(taskType)) return "system";
  if (EXTERNAL_TYPES.has(taskType)) return "external";
  if (DECIDER_TYPES.has(taskType)) return "decider";
  return "worker";
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Own-key write that is safe for `__proto__` (a legal ref and JSON key). */
function put(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function copy(obj: Json): Json {
  const out: Json = {};
  for (const key of Object.keys(obj)) put(out, key, obj[key]);
  return out;
}

/**
 * A workflow version as an expression resolved it: a whole number from 1, or
 * its digits (Conductor converts); undefined for none (null/absent: the
 * latest), null for anything else.
 */
function workflowVersion(value: unknown): number | undefined | null {
  if (value === undefined || value === null || value === "") return undefined;
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n >= 1 ? n : null;
}

function asObject(value: unknown): Json {
  return isPlainObject(value) ? value : {};
}

const rowKey = (ref: string, iteration: number): string => `${ref}\u0000${iteration}`;
const keyOf = (r: { ref: string; iteration: number; attempt: number }): TaskKey => ({ ref: r.ref, iteration: r.iteration, attempt: r.attempt });
const keyText = (k: TaskKey): string => `${k.ref}\u0000${k.iteration}\u0000${k.attempt}`;
const sameKey = (a: TaskKey, b: TaskKey): boolean => a.ref === b.ref && a.iteration === b.iteration && a.attempt === b.attempt;
const isSuccess = (s: TaskStatus): boolean => s === "COMPLETED" || s === "COMPLETED_WITH_ERRORS";
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function policySnapshot(policy: EffectiveTaskPolicy): TaskPolicySnapshot {
  const { inputTemplate: _inputTemplate, ...rest } = policy;
  return rest;
}

/** A SWITCH value as the case label it selects: strings as themselves, numbers and booleans as text, null/absent as null. */
function caseLabel(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

class Evaluation {
  private readonly commands: Command[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  /** Latest attempt per (ref, iteration). */
  private readonly rows = new Map<string, Row>();
  /** Latest (iteration, attempt) per ref: what `${ref…}` reads. */
  private readonly latest = new Map<string, Row>();
  /** Rows that can be non-terminal: the frontier and what this evaluation created. */
  private readonly tracked: Row[] = [];
  private readonly work: Work[] = [];
  private readonly seenIds: string[] = [];
  /** Forks whose `completed` counter this evaluation raises (one updateTask each, at the end). */
  private readonly dirtyForks = new Set<Row>();
  private readonly pendingForkChecks = new Set<string>();
  /**
   * Per fork (rowKey of the fork row): the successful instance rows this
   * evaluation reacted to, by identity — what it adds to the fork's loaded
   * `completed` count. A set, so no row can count twice.
   */
  private readonly forkArrivals = new Map<string, Set<string>>();
  /** Forks ending in this evaluation through `aggregateForkOutput`: the shell ends them, the next evaluation reacts. */
  private readonly aggregatingForks = new Set<Row>();
  /** scheduleTask commands of rows created in this evaluation, by key text. */
  private readonly createdCommands = new Map<string, ScheduleTaskCommand>();
  /** Created rows that also ended in this evaluation: their scheduleTask (and its side effects) give way to one terminal insert. */
  private readonly retired = new Set<string>();
  /** Rows this evaluation timed out for exceeding totalTimeoutSeconds (their failTask is already emitted). */
  private readonly totalTimedOut = new Set<Row>();
  /** Delayed external rows this evaluation started (`startTask`), by key text. */
  private readonly startedNow = new Set<string>();
  private variables: Json;
  private ending: WorkflowEndCommand | undefined;
  private lastFinished: Row | undefined;
  private loopAdvances = 0;
  private requestedEvaluation = false;

  constructor(
    private readonly bp: Blueprint,
    private readonly state: EvaluationState,
    private readonly now: number,
    private readonly deps: DecideDeps,
  ) {
    this.variables = copy(asObject(state.workflow.variables));
    const ids = new Set<string>();
    for (const snap of state.frontier) {
      ids.add(snap.taskId);
      const row = this.track(this.index(this.fromSnapshot(snap)));
      // Every unseen terminal row is marked seen by this evaluation, even one the workflow's end makes moot:
      // the unprocessed index must stay a handful of rows (invariant 4).
      if (!row.seen && isTerminalTaskStatus(row.status)) this.seenIds.push(snap.taskId);
    }
    for (const snap of state.loaded) {
      if (ids.has(snap.taskId)) continue;
      ids.add(snap.taskId);
      const row = this.index(this.fromSnapshot(snap));
      if (!isTerminalTaskStatus(row.status)) this.track(row);
    }
  }

  result(): Decision {
    return { commands: this.commands, diagnostics: this.diagnostics };
  }

  run(): void {
    this.checkWorkflowTimeout();
    if (this.ending === undefined) {
      this.start();
      this.checkDeadlines();
      this.processUnseen();
      this.checkContainers();
      this.drain();
      this.flushForks();
    }
    this.dropRetired();
    if (this.seenIds.length > 0) this.commands.push({ kind: "markSeen", taskIds: [...this.seenIds].sort(compareText) });
    if (this.ending !== undefined) this.finishEnding();
    else if (this.tracked.every((r) => isTerminalTaskStatus(r.status))) this.completeWorkflow();
  }

  // ---------------------------------------------------------------------------
  // The working view

  private fromSnapshot(s: TaskSnapshot): Row {
    return {
      taskId: s.taskId,
      ref: s.ref,
      iteration: s.iteration,
      attempt: s.attempt,
      status: s.status,
      taskType: s.taskType,
      taskDefName: s.taskDefName ?? s.taskType,
      input: asObject(s.input),
      output: asObject(s.output),
      reasonForIncompletion: s.reasonForIncompletion,
      scheduledAt: s.scheduledAt,
      firstScheduledAt: s.firstScheduledAt,
      startedAt: s.startedAt,
      endedAt: s.endedAt,
      seen: s.seen,
      parentRef: s.parentRef,
      forkIndex: s.forkIndex,
      timeoutSeconds: s.timeoutSeconds,
      pollTimeoutSeconds: s.pollTimeoutSeconds,
      created: false,
    };
  }

  private track(row: Row): Row {
    this.tracked.push(row);
    return row;
  }

  /** Adds a row to the indexes when it is the latest of its (ref, iteration) and of its ref. */
  private index(row: Row): Row {
    const k = rowKey(row.ref, row.iteration);
    const atIteration = this.rows.get(k);
    if (atIteration === undefined || row.attempt > atIteration.attempt) this.rows.set(k, row);
    const last = this.latest.get(row.ref);
    if (last === undefined || row.iteration > last.iteration || (row.iteration === last.iteration && row.attempt > last.attempt)) this.latest.set(row.ref, row);
    return row;
  }

  private rowAt(ref: string, iteration: number): Row | undefined {
    return this.rows.get(rowKey(ref, iteration));
  }

  private isLatest(row: Row): boolean {
    return this.rowAt(row.ref, row.iteration) === row;
  }

  private node(ref: string): BlueprintNode | undefined {
    return blueprintNode(this.bp, ref);
  }

  /** The blueprint node whose policy governs a row: its own, or for a fork instance its fork's. */
  private nodeOfRow(row: Row): BlueprintNode | undefined {
    const agentChild = parseAgentChildRef(row.ref);
    if (agentChild !== undefined) return this.node(agentChild.agentRef);
    const instance = parseForkInstanceRef(row.ref);
    return this.node(instance === undefined ? row.ref : instance.forkRef);
  }

  private newRow(fields: Partial<Row> & Pick<Row, "ref" | "iteration" | "attempt" | "status" | "taskType" | "taskDefName">): Row {
    const terminal = isTerminalTaskStatus(fields.status);
    const row: Row = {
      taskId: undefined,
      input: {},
      output: {},
      reasonForIncompletion: undefined,
      scheduledAt: this.now,
      firstScheduledAt: undefined,
      startedAt: fields.status === "SCHEDULED" ? undefined : this.now,
      endedAt: terminal ? this.now : undefined,
      seen: terminal,
      parentRef: undefined,
      forkIndex: undefined,
      timeoutSeconds: undefined,
      pollTimeoutSeconds: undefined,
      ...fields,
      created: true,
    };
    this.index(row);
    this.track(row);
    return row;
  }

  private context(): ExpressionContext {
    const w = this.state.workflow;
    return {
      workflow: {
        workflowId: w.id,
        workflowType: w.defName,
        version: w.defVersion,
        status: w.status,
        input: asObject(w.input),
        output: {},
        variables: this.variables,
        startTime: w.startedAt,
        ...(w.correlationId === undefined ? {} : { correlationId: w.correlationId }),
        ...(w.parentWorkflowId === undefined ? {} : { parentWorkflowId: w.parentWorkflowId }),
        ...(w.parentWorkflowTaskId === undefined ? {} : { parentWorkflowTaskId: w.parentWorkflowTaskId }),
      },
      task: (ref) => {
        const row = this.latest.get(ref);
        return row === undefined ? undefined : this.view(row);
      },
    };
  }

  /** A row as templates see it. Rows created in this evaluation have no id yet: their `taskId` reads "". */
  private view(row: Row): TaskView {
    const view: TaskView = {
      taskId: row.taskId ?? "",
      referenceTaskName: row.iteration > 0 ? `${row.ref}__${row.iteration}` : row.ref,
      taskType: row.taskType,
      status: row.status,
      input: row.input,
      output: row.output,
      iteration: row.iteration,
      retryCount: row.attempt,
      taskDefName: row.taskDefName,
      scheduledTime: row.scheduledAt,
      workflowInstanceId: this.state.workflow.id,
    };
    if (row.reasonForIncompletion !== undefined) view.reasonForIncompletion = row.reasonForIncompletion;
    if (row.startedAt !== undefined) view.startTime = row.startedAt;
    if (row.endedAt !== undefined) view.endTime = row.endedAt;
    return view;
  }

  private resolve(template: unknown, context = this.context()): unknown {
    return resolveTemplate(template, context);
  }

  /** The node's input: its policy's inputTemplate overridden by its own input, resolved. */
  private resolveInput(node: BlueprintNode, context = this.context()): Json {
    return asObject(this.resolve(nodeInputTemplate(node), context));
  }

  private priority(): number {
    return this.state.workflow.priority ?? 0;
  }

  private diag(level: Diagnostic["level"], code: string, message: string, ref?: string): void {
    this.diagnostics.push(ref === undefined ? { level, code, message } : { level, code, message, ref });
  }

  // ---------------------------------------------------------------------------
  // Phases

  private checkWorkflowTimeout(): void {
    const seconds = this.bp.timeoutSeconds;
    if (seconds <= 0) return;
    const deadline = this.state.workflow.startedAt + seconds * 1000;
    if (this.now < deadline) return;
    if (this.bp.timeoutPolicy === "TIME_OUT_WF") {
      const reason = `Workflow timed out after ${seconds}s (timeoutPolicy TIME_OUT_WF)`;
      this.end({ kind: "timeOutWorkflow", reason, output: {}, ...this.failureWorkflow(reason, "TIMED_OUT") });
    } else if (this.state.firedTimers?.some((t) => t.kind === "workflowTimeout") === true) {
      this.commands.push({ kind: "alert", alert: "workflowTimeout", message: `Workflow exceeded its ${seconds}s timeout (timeoutPolicy ALERT_ONLY)` });
    }
  }

  /** No start node has a row: the workflow has not started (start refs are always loaded; see refsToLoad). */
  private start(): void {
    if (this.bp.startNodes.some((ref) => this.latest.has(ref))) return;
    if (this.bp.timeoutSeconds > 0) {
      this.commands.push({ kind: "armTimer", timer: "workflowTimeout", fireAt: this.state.workflow.startedAt + this.bp.timeoutSeconds * 1000 });
    }
    for (const ref of this.bp.startNodes) this.work.push({ kind: "eval", ref, iteration: 0 });
  }

  /** Deadlines of in-flight rows this evaluation did not create: WAIT timers, poll timeouts, run timeouts. */
  private checkDeadlines(): void {
    const inFlight = this.tracked.filter((r) => !r.created && !isTerminalTaskStatus(r.status)).sort(compareRows);
    for (const row of inFlight) {
      if (this.ending !== undefined) return;
      const node = this.nodeOfRow(row);
      if (node === undefined) continue;
      const executor = executorOf(row.taskType);
      if (executor === "external" && row.status === "SCHEDULED") {
        // A delayed start or retry of a task nothing polls: start it once its time has come.
        if (row.scheduledAt + attemptDelaySeconds(node.policy, row.attempt) * 1000 <= this.now) this.startDeferred(row, node);
        continue;
      }
      if (row.taskType === "WAIT") {
        const fireAt = row.input[WAIT_UNTIL_KEY];
        if (typeof fireAt === "number" && fireAt <= this.now) {
          this.completeExisting(row, "COMPLETED", row.output);
          this.afterTerminal(row);
        }
        continue;
      }
      if (executor !== "worker" && executor !== "system") continue;
      const policy = node.policy;
      const pollTimeout = row.pollTimeoutSeconds ?? policy.pollTimeoutSeconds;
      const runAt = row.scheduledAt + attemptDelaySeconds(policy, row.attempt) * 1000;
      if (row.status === "SCHEDULED" && pollTimeout > 0 && runAt + pollTimeout * 1000 <= this.now) {
        this.failExisting(row, "TIMED_OUT", `Not polled within pollTimeoutSeconds (${pollTimeout}s)`);
        this.afterTerminal(row, "poll");
        continue;
      }
      const total = this.totalDeadline(row, node);
      if (total !== undefined && total <= this.now) {
        const reason = `Exceeded totalTimeoutSeconds (${policy.totalTimeoutSeconds}s) across all attempts (timeoutPolicy ${policy.timeoutPolicy})`;
        if (policy.timeoutPolicy === "ALERT_ONLY") {
          if (this.state.firedTimers?.some((t) => t.kind === "taskTimeout" && (t.taskId === row.taskId || (t.key !== undefined && sameKey(t.key, keyOf(row))))) === true) {
            this.commands.push({ kind: "alert", alert: "taskTimeout", key: keyOf(row), ...(row.taskId === undefined ? {} : { taskId: row.taskId }), message: `Task ${row.ref} ${reason}` });
          }
          continue;
        }
        this.failExisting(row, "TIMED_OUT", reason);
        this.totalTimedOut.add(row);
        this.afterTerminal(row, "run");
        continue;
      }
      const timeout = row.timeoutSeconds ?? policy.timeoutSeconds;
      if (row.status !== "IN_PROGRESS" || timeout <= 0 || row.startedAt === undefined || row.startedAt + timeout * 1000 > this.now) continue;
      if (policy.timeoutPolicy === "ALERT_ONLY") {
        if (this.state.firedTimers?.some((t) => t.taskId === row.taskId || (t.key !== undefined && sameKey(t.key, keyOf(row)))) === true) {
          this.commands.push({ kind: "alert", alert: "taskTimeout", key: keyOf(row), ...(row.taskId === undefined ? {} : { taskId: row.taskId }), message: `Task ${row.ref} exceeded its ${timeout}s timeout (ALERT_ONLY)` });
        }
        continue;
      }
      this.failExisting(row, "TIMED_OUT", `Timed out after ${timeout}s (timeoutPolicy ${policy.timeoutPolicy})`);
      this.afterTerminal(row, "run");
    }
  }

  /** Every terminal row no evaluation has reacted to yet (invariant 4), oldest first. */
  private processUnseen(): void {
    const unseen = this.tracked.filter((r) => !r.created && !r.seen && isTerminalTaskStatus(r.status)).sort(compareRows);
    for (const row of unseen) {
      row.seen = true;
      if (this.ending !== undefined) continue;
      this.afterTerminal(row, "run");
    }
  }

  /** Loops and forks in flight: their iteration or last instance may have ended (also resumes a loop a previous evaluation paused). */
  private checkContainers(): void {
    for (const row of [...this.tracked].sort(compareRows)) {
      if (row.created || isTerminalTaskStatus(row.status)) continue;
      if (row.taskType === "DO_WHILE") this.work.push({ kind: "loop", ref: row.ref });
      else if (row.taskType === "FORK_JOIN_DYNAMIC") this.queueForkCheck(row.ref, row.iteration);
      else if (row.taskType === "AGENT") this.work.push({ kind: "agent", ref: row.ref });
    }
  }

  private drain(): void {
    for (let i = 0; i < this.work.length && this.ending === undefined; i++) {
      const item = this.work[i]!;
      if (item.kind === "eval") this.evaluate(item.ref, item.iteration);
      else if (item.kind === "loop") this.checkLoop(item.ref);
      else if (item.kind === "agent") this.checkAgent(item.ref);
      else {
        this.pendingForkChecks.delete(rowKey(item.ref, item.iteration));
        this.checkFork(item.ref, item.iteration);
      }
    }
  }

  /** One check per fork per evaluation, however many of its instances finished (a check is O(1): it reads the fork's counters). */
  private queueForkCheck(ref: string, iteration: number): void {
    const k = rowKey(ref, iteration);
    if (this.pendingForkChecks.has(k)) return;
    this.pendingForkChecks.add(k);
    this.work.push({ kind: "fork", ref, iteration });
  }

  // ---------------------------------------------------------------------------
  // Reacting to a row that became terminal

  /**
   * A row just became terminal (seen unprocessed, or ended by decide). Only
   * the latest attempt of its (ref, iteration) counts: an older one superseded
   * by a retry changes nothing.
   */
  private afterTerminal(row: Row, timeoutKind: "poll" | "run" = "run"): void {
    const node = this.nodeOfRow(row);
    if (node === undefined) {
      this.diag("warn", "unknown-ref", `Task ${row.ref} names no node of the blueprint; ignored`, row.ref);
      return;
    }
    if (!this.isLatest(row)) return;
    if (row.taskId !== undefined && !row.created && this.mayHaveTimers(node, row)) {
      this.commands.push({ kind: "cancelTimer", key: keyOf(row), taskId: row.taskId });
    }
    const instance = parseForkInstanceRef(row.ref);
    const agentChild = parseAgentChildRef(row.ref);
    switch (row.status) {
      case "COMPLETED":
      case "COMPLETED_WITH_ERRORS":
      case "SKIPPED":
        if (row.status !== "SKIPPED") this.lastFinished = row;
        if (agentChild !== undefined) this.work.push({ kind: "agent", ref: agentChild.agentRef });
        else if (instance !== undefined) this.forkInstanceDone(instance.forkRef, row);
        else this.resolved(node, row.iteration);
        return;
      default:
        break;
    }
    // FAILED, FAILED_WITH_TERMINAL_ERROR, TIMED_OUT, CANCELED.
    if (row.status === "TIMED_OUT" && timeoutKind === "run" && node.policy.timeoutPolicy === "TIME_OUT_WF") {
      const reason = `Task ${row.ref} timed out (timeoutPolicy TIME_OUT_WF)`;
      this.end({ kind: "timeOutWorkflow", reason, timedOutTaskRef: row.ref, output: {}, ...this.failureWorkflow(reason, "TIMED_OUT", row.taskId) });
      return;
    }
    const retryable = row.status === "FAILED" || row.status === "TIMED_OUT";
    if (retryable && row.attempt < node.policy.retryCount) {
      if (!this.retryExceedsTotal(row, node)) {
        this.retry(row, node);
        return;
      }
      // totalTimeoutSeconds is spent: the failure is final, as TIMED_OUT (per timeoutPolicy).
      if (!this.totalTimedOut.has(row)) {
        this.failExisting(row, "TIMED_OUT", `Exceeded totalTimeoutSeconds (${node.policy.totalTimeoutSeconds}s) across all attempts; no retry after attempt ${row.attempt}${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`);
        this.totalTimedOut.add(row);
      }
      if (node.policy.timeoutPolicy === "TIME_OUT_WF") {
        const reason = `Task ${row.ref} exceeded totalTimeoutSeconds (${node.policy.totalTimeoutSeconds}s) (timeoutPolicy TIME_OUT_WF)`;
        this.end({ kind: "timeOutWorkflow", reason, timedOutTaskRef: row.ref, output: {}, ...this.failureWorkflow(reason, "TIMED_OUT", row.taskId) });
        return;
      }
    }
    if (instance !== undefined) {
      this.forkInstanceFailed(instance.forkRef, row);
      return;
    }
    if (agentChild !== undefined) {
      this.agentChildFailed(agentChild.agentRef, row, agentChild.role);
      return;
    }
    if (node.optional) {
      // Conductor's optional task: the failure is recorded, the flow carries on.
      this.completeExisting(row, "COMPLETED_WITH_ERRORS", row.output);
      this.lastFinished = row;
      this.resolved(node, row.iteration);
      return;
    }
    this.failWorkflow(row, `Task ${row.ref} ${row.status === "CANCELED" ? "was canceled" : "failed"}${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`);
  }

  private mayHaveTimers(node: BlueprintNode, row: Row): boolean {
    if (row.taskType === "WAIT") return true;
    const executor = executorOf(row.taskType);
    if (executor === "external") return attemptDelaySeconds(node.policy, row.attempt) > 0;
    if (executor !== "worker" && executor !== "system") return false;
    return (row.pollTimeoutSeconds ?? node.policy.pollTimeoutSeconds) > 0 || (row.timeoutSeconds ?? node.policy.timeoutSeconds) > 0 || node.policy.totalTimeoutSeconds > 0;
  }

  /** Epoch ms the task's totalTimeoutSeconds ends (from its first attempt's scheduledAt), or undefined when it has none. */
  private totalDeadline(row: Row, node: BlueprintNode): number | undefined {
    const total = node.policy.totalTimeoutSeconds;
    return total > 0 ? (row.firstScheduledAt ?? row.scheduledAt) + total * 1000 : undefined;
  }

  /** True when the retry after `row` could not start before the task's totalTimeoutSeconds ends. */
  private retryExceedsTotal(row: Row, node: BlueprintNode): boolean {
    const deadline = this.totalDeadline(row, node);
    return deadline !== undefined && this.now + retryDelaySeconds(node.policy, row.attempt) * 1000 >= deadline;
  }

  /** A node is resolved at `iteration`: its successors may be ready, and its loop's iteration may be over. */
  private resolved(node: BlueprintNode, iteration: number): void {
    if (node.parent !== null) this.work.push({ kind: "loop", ref: node.parent });
    for (const e of node.successors) this.work.push({ kind: "eval", ref: e.ref, iteration });
  }

  /** A retry is a new attempt with the failed attempt's input, visible after the policy's delay; the failed row stays as it is (invariant 5). */
  private retry(row: Row, node: BlueprintNode): void {
    const delay = retryDelaySeconds(node.policy, row.attempt);
    const executor = executorOf(row.taskType);
    const next = this.newRow({
      ref: row.ref,
      iteration: row.iteration,
      attempt: row.attempt + 1,
      status: initialStatus(executor, delay),
      taskType: row.taskType,
      taskDefName: row.taskDefName,
      input: row.input,
      parentRef: row.parentRef,
      forkIndex: row.forkIndex,
      firstScheduledAt: row.firstScheduledAt ?? row.scheduledAt,
    });
    // A delayed task nothing polls waits SCHEDULED for its `retry` timer (emitSchedule arms it).
    this.emitSchedule(next, node, executor, this.now + delay * 1000, undefined, `retry of attempt ${row.attempt}${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`);
  }

  // ---------------------------------------------------------------------------
  // Readiness and dead-path elimination

  /**
   * Decides node `ref` at `iteration` if it has no row yet: it runs when every
   * incoming edge is resolved and at least one was taken, and is skipped (a
   * SKIPPED row, so joins downstream see it resolved) when all are resolved and
   * none was taken. Rows decide needs and does not have read as unresolved, so
   * missing data can delay a decision but never make a wrong one.
   */
  private evaluate(ref: string, iteration: number): void {
    const node = this.node(ref);
    if (node === undefined || this.rowAt(ref, iteration) !== undefined) return;
    if (node.parent !== null) {
      const loop = this.latest.get(node.parent);
      if (loop === undefined || isTerminalTaskStatus(loop.status) || loopIteration(loop) !== iteration) return;
    } else if (iteration !== 0) {
      return;
    }
    let taken = node.incoming.length === 0;
    for (const edge of node.incoming) {
      const source = this.rowAt(edge.ref, iteration);
      if (source === undefined) return;
      const state = this.edgeState(edge, source);
      if (state === "pending") return;
      if (state === "taken") taken = true;
    }
    if (taken) this.schedule(node, iteration);
    else this.skip(node, iteration);
  }

  private edgeState(edge: BlueprintEdge, source: Row): "pending" | "taken" | "not-taken" {
    if (source.status === "SKIPPED") return "not-taken";
    if (!isSuccess(source.status)) return "pending";
    const from = this.node(edge.ref);
    if (from?.type !== "SWITCH") return "taken";
    return edge.case !== null && edge.case === switchHandle(from, source) ? "taken" : "not-taken";
  }

  private skip(node: BlueprintNode, iteration: number): void {
    const parentRef = node.parent ?? undefined;
    this.newRow({ ref: node.ref, iteration, attempt: 0, status: "SKIPPED", taskType: node.type, taskDefName: node.taskDefName, parentRef });
    this.commands.push({ kind: "skipTask", key: { ref: node.ref, iteration, attempt: 0 }, taskType: node.type, taskDefName: node.taskDefName, ...(parentRef === undefined ? {} : { parentRef }) });
    this.resolved(node, iteration);
  }

  // ---------------------------------------------------------------------------
  // Scheduling, per node type

  private schedule(node: BlueprintNode, iteration: number): void {
    const context = this.context();
    const input = this.resolveInput(node, context);
    const config = node.config;
    switch (node.type) {
      case "SIMPLE":
        return this.queue(node, iteration, input, "SIMPLE", node.taskDefName);
      case "DYNAMIC": {
        const param = config.dynamicTaskNameParam;
        const name = typeof param === "string" ? input[param] : undefined;
        if (typeof name !== "string" || name === "") {
          return this.failNew(node, iteration, input, `DYNAMIC: input ${JSON.stringify(param)} does not name a task`);
        }
        return this.queue(node, iteration, input, "SIMPLE", name);
      }
      case "HTTP":
        put(input, "http_request", this.resolve(config.httpRequest, context));
        return this.queue(node, iteration, input, "HTTP", node.taskDefName);
      case "HTTP_POLL":
        put(input, "http_request", this.resolve(config.httpRequest, context));
        return this.queue(node, iteration, input, "HTTP_POLL", node.taskDefName);
      case "JDBC": {
        // Conductor's JDBC reads its statement from the task input: the node's fields go in beside the rest.
        const jdbc = asObject(this.resolve(config.jdbc, context));
        for (const key of Object.keys(jdbc)) put(input, key, jdbc[key]);
        return this.queue(node, iteration, input, "JDBC", node.taskDefName);
      }
      case "LIST_MCP_TOOLS":
      case "CALL_MCP_TOOL": {
        // Conductor's MCP tasks read mcpServer, method, arguments and headers from the task input.
        const mcp = asObject(this.resolve(config.mcp, context));
        for (const key of Object.keys(mcp)) put(input, key, mcp[key]);
        return this.queue(node, iteration, input, node.type, node.taskDefName);
      }
      case "LLM_CHAT_COMPLETE":
      case "LLM_TEXT_COMPLETE":
      case "LLM_GENERATE_EMBEDDINGS":
      case "LLM_INDEX_TEXT":
      case "LLM_SEARCH_INDEX": {
        // Conductor's AI tasks read llmProvider, model, messages, … from the task input.
        const llm = asObject(this.resolve(config.llm, context));
        for (const key of Object.keys(llm)) put(input, key, llm[key]);
        return this.queue(node, iteration, input, node.type, node.taskDefName);
      }
      case "INLINE":
        put(input, "evaluatorType", config.evaluatorType);
        put(input, "expression", config.expression);
        return this.queue(node, iteration, input, "INLINE", node.taskDefName);
      case "JSON_JQ_TRANSFORM":
        put(input, "queryExpression", config.queryExpression);
        return this.queue(node, iteration, input, "JSON_JQ_TRANSFORM", node.taskDefName);
      case "EVENT":
        put(input, "sink", config.sink);
        return this.queue(node, iteration, input, "EVENT", node.taskDefName);
      case "NOOP":
        return this.completeNew(node, iteration, input, {});
      case "SET_VARIABLE": {
        const merged = copy(this.variables);
        for (const key of Object.keys(input)) put(merged, key, input[key]);
        this.variables = merged;
        this.commands.push({ kind: "setVariables", variables: merged });
        return this.completeNew(node, iteration, input, {});
      }
      case "SWITCH":
        return this.switchNode(node, iteration, input);
      case "JOIN":
        return this.completeNew(node, iteration, input, this.joinOutput(node, iteration));
      case "EXCLUSIVE_JOIN":
        return this.completeNew(node, iteration, input, this.exclusiveJoinOutput(node, iteration));
      case "TERMINATE":
        return this.terminate(node, iteration, input, context);
      case "WAIT":
        return this.wait(node, iteration, input, context);
      case "HUMAN":
        // Resolved now, once, so the inbox row and every escalation step see the values of the moment the task was scheduled.
        for (const field of ["title", "assignee", "dueIn", "escalation"]) if (config[field] !== undefined) put(input, field, this.resolve(config[field], context));
        // Passed as written: a form schema's "${" is text for the person to read, not an expression.
        for (const field of ["approvals", "allowSelfApproval", "form", "outcomes"]) if (config[field] !== undefined) put(input, field, config[field]);
        return this.external(node, iteration, input);
      case "SUB_WORKFLOW":
        return this.subWorkflow(node, iteration, input, context);
      case "START_WORKFLOW": {
        const start = asObject(this.resolve(config.startWorkflow, context));
        if (start.version !== undefined) {
          const version = workflowVersion(start.version);
          if (version === null) return this.failNew(node, iteration, input, `START_WORKFLOW: version ${JSON.stringify(start.version)} is not a whole number from 1`);
          put(start, "version", version);
        }
        if (start.priority !== undefined && !(Number.isInteger(start.priority) && (start.priority as number) >= 0 && (start.priority as number) <= 99)) {
          return this.failNew(node, iteration, input, `START_WORKFLOW: priority ${JSON.stringify(start.priority)} is not a whole number from 0 to 99`);
        }
        if (start.idempotencyKey !== undefined && (typeof start.idempotencyKey !== "string" || start.idempotencyKey === "")) {
          return this.failNew(node, iteration, input, `START_WORKFLOW: idempotencyKey ${JSON.stringify(start.idempotencyKey)} is not a non-empty string`);
        }
        if (start.idempotencyStrategy !== undefined && !["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"].includes(start.idempotencyStrategy as string)) {
          return this.failNew(node, iteration, input, `START_WORKFLOW: idempotencyStrategy ${JSON.stringify(start.idempotencyStrategy)} is not RETURN_EXISTING, FAIL or FAIL_ON_RUNNING`);
        }
        put(input, "startWorkflow", start);
        return this.external(node, iteration, input);
      }
      case "DO_WHILE":
        return this.startLoop(node, iteration, input, context);
      case "FORK_JOIN_DYNAMIC":
        return this.fork(node, iteration, input, context);
      case "AGENT":
        return this.startAgent(node, iteration, input, context);
    }
  }

  /** A task for a worker or the system-task runner, visible after the policy's startDelay. */
  private queue(node: BlueprintNode, iteration: number, input: Json, taskType: string, taskDefName: string): void {
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status: "SCHEDULED", taskType, taskDefName, input, parentRef: node.parent ?? undefined });
    this.emitSchedule(row, node, executorOf(taskType), this.now + node.policy.startDelay * 1000, this.cacheKey(node));
  }

  /** A task nothing polls: started at once, or — with a startDelay — SCHEDULED until its `startDelay` timer wakes the decider. */
  private external(node: BlueprintNode, iteration: number, input: Json): void {
    const delay = node.policy.startDelay;
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status: initialStatus("external", delay), taskType: node.type, taskDefName: node.taskDefName, input, parentRef: node.parent ?? undefined });
    this.emitSchedule(row, node, "external", this.now + delay * 1000);
  }

  /**
   * Starts a delayed external row whose time has come: `startTask` (SCHEDULED →
   * IN_PROGRESS), then what starting it takes (child workflow, WAIT timer). A
   * WAIT's duration runs from now; one already due completes at once.
   */
  private startDeferred(row: Row, node: BlueprintNode): void {
    if (row.taskId === undefined) return;
    const input = copy(row.input);
    if (row.taskType === "WAIT" && hasOwn(input, "duration")) {
      const seconds = waitDurationSeconds(input.duration);
      if (seconds !== null) put(input, WAIT_UNTIL_KEY, this.now + seconds * 1000);
    }
    this.commands.push({ kind: "startTask", key: keyOf(row), taskId: row.taskId, from: "SCHEDULED", input });
    this.startedNow.add(keyText(keyOf(row)));
    row.status = "IN_PROGRESS";
    row.startedAt = this.now;
    row.input = input;
    const fireAt = input[WAIT_UNTIL_KEY];
    if (row.taskType === "WAIT" && typeof fireAt === "number" && fireAt <= this.now) {
      this.completeExisting(row, "COMPLETED", row.output);
      this.afterTerminal(row);
      return;
    }
    this.emitStartEffects(row, node);
  }

  private cacheKey(node: BlueprintNode): string | undefined {
    const cache = node.policy.cache;
    if (cache === undefined) return undefined;
    const key = this.resolve(cache.key);
    return typeof key === "string" ? key : JSON.stringify(key);
  }

  /** Emits scheduleTask for a row just created, plus what starting it takes (timers, child workflows). */
  private emitSchedule(row: Row, node: BlueprintNode, executor: TaskExecutor, runAt: number, cacheKey?: string, reason?: string): void {
    const queued = executor === "worker" || executor === "system";
    const command: ScheduleTaskCommand = {
      kind: "scheduleTask",
      key: keyOf(row),
      taskType: row.taskType,
      taskDefName: row.taskDefName,
      executor,
      status: row.status === "SCHEDULED" ? "SCHEDULED" : "IN_PROGRESS",
      input: row.input,
      output: row.output,
      priority: this.priority(),
      runAt,
      policy: policySnapshot(node.policy),
    };
    if (queued) command.queueName = executor === "system" ? row.taskType : row.taskDefName;
    if (cacheKey !== undefined) command.cacheKey = cacheKey;
    if (row.parentRef !== undefined) command.parentRef = row.parentRef;
    if (row.forkIndex !== undefined) command.forkIndex = row.forkIndex;
    if (reason !== undefined) command.reason = reason;
    if (row.firstScheduledAt !== undefined) command.firstScheduledAt = row.firstScheduledAt;
    this.commands.push(command);
    this.createdCommands.set(keyText(command.key), command);
    if (queued && node.policy.pollTimeoutSeconds > 0) {
      this.commands.push({ kind: "armTimer", timer: "scheduleToStart", key: keyOf(row), fireAt: runAt + node.policy.pollTimeoutSeconds * 1000 });
    }
    if (queued && node.policy.totalTimeoutSeconds > 0) {
      this.commands.push({ kind: "armTimer", timer: "taskTimeout", key: keyOf(row), fireAt: (row.firstScheduledAt ?? row.scheduledAt) + node.policy.totalTimeoutSeconds * 1000 });
    }
    if (executor === "external" && row.status === "SCHEDULED") {
      // Delayed: nothing starts until the timer wakes the decider (startDeferred).
      this.commands.push({ kind: "armTimer", timer: row.attempt === 0 ? "startDelay" : "retry", key: keyOf(row), fireAt: runAt });
      return;
    }
    this.emitStartEffects(row, node);
  }

  /** What starting a row takes besides the row: the WAIT timer, the child workflow, the started workflow. */
  private emitStartEffects(row: Row, node: BlueprintNode): void {
    if (row.taskType === "WAIT") {
      const fireAt = row.input[WAIT_UNTIL_KEY];
      if (typeof fireAt === "number") this.commands.push({ kind: "armTimer", timer: "wait", key: keyOf(row), fireAt });
    } else if (row.taskType === "SUB_WORKFLOW") {
      this.emitSubWorkflowStart(row, node);
    } else if (row.taskType === "START_WORKFLOW") {
      const start = asObject(row.input.startWorkflow);
      this.commands.push({
        kind: "startWorkflow",
        key: keyOf(row),
        name: String(start.name),
        ...(typeof start.version === "number" ? { version: start.version } : {}),
        input: asObject(start.input),
        ...(typeof start.correlationId === "string" ? { correlationId: start.correlationId } : {}),
        ...(typeof start.priority === "number" ? { priority: start.priority } : {}),
        ...(typeof start.idempotencyKey === "string" ? { idempotencyKey: start.idempotencyKey } : {}),
        ...(start.idempotencyStrategy === "FAIL" || start.idempotencyStrategy === "FAIL_ON_RUNNING" ? { idempotencyStrategy: start.idempotencyStrategy } : {}),
      });
    }
  }

  /** Task input keys that name the child workflow; the rest of the input is the child's input (Conductor's SubWorkflow task). */
  private emitSubWorkflowStart(row: Row, node: BlueprintNode): void {
    const childInput: Json = {};
    for (const key of Object.keys(row.input)) if (key !== "subWorkflowName" && key !== "subWorkflowVersion") put(childInput, key, row.input[key]);
    const version = row.input.subWorkflowVersion;
    const inline = node.type === "SUB_WORKFLOW" && row.forkIndex === undefined ? node.config.workflowDefinition : undefined;
    const correlationId = this.state.workflow.correlationId;
    this.commands.push({
      kind: "startSubWorkflow",
      key: keyOf(row),
      name: String(row.input.subWorkflowName),
      ...(typeof version === "number" ? { version } : {}),
      ...(inline === undefined ? {} : { workflowDefinition: inline }),
      input: childInput,
      ...(correlationId === undefined ? {} : { correlationId }),
      priority: this.priority(),
    });
  }

  private subWorkflow(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const param = asObject(this.resolve(node.config.subWorkflowParam, context));
    const inline = asObject(node.config.workflowDefinition);
    const name = typeof param.name === "string" ? param.name : inline.name;
    if (typeof name !== "string" || name === "") return this.failNew(node, iteration, input, "SUB_WORKFLOW: no workflow name");
    put(input, "subWorkflowName", name);
    const version = param.version === undefined ? inline.version : workflowVersion(param.version);
    if (version === null) return this.failNew(node, iteration, input, `SUB_WORKFLOW: version ${JSON.stringify(param.version)} is not a whole number from 1`);
    if (typeof version === "number") put(input, "subWorkflowVersion", version);
    this.external(node, iteration, input);
  }

  /** A row decide resolves on the spot, inserted already COMPLETED and seen. */
  private completeNew(node: BlueprintNode, iteration: number, input: Json, output: Json): void {
    const parentRef = node.parent ?? undefined;
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status: "COMPLETED", taskType: node.type, taskDefName: node.taskDefName, input, output, parentRef });
    this.commands.push({
      kind: "completeTask",
      key: keyOf(row),
      status: "COMPLETED",
      taskType: row.taskType,
      taskDefName: row.taskDefName,
      input,
      output,
      ...(parentRef === undefined ? {} : { parentRef }),
    });
    this.lastFinished = row;
    this.resolved(node, iteration);
  }

  /**
   * Something decide evaluated failed (a script, a bad value). Never retried:
   * the same inputs would fail the same way. Optional: COMPLETED_WITH_ERRORS and on.
   */
  private failNew(node: BlueprintNode, iteration: number, input: Json, reason: string): void {
    const parentRef = node.parent ?? undefined;
    const status = node.optional ? "COMPLETED_WITH_ERRORS" : "FAILED_WITH_TERMINAL_ERROR";
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status, taskType: node.type, taskDefName: node.taskDefName, input, reasonForIncompletion: reason, parentRef });
    const common = { key: keyOf(row), taskType: row.taskType, taskDefName: row.taskDefName, input, reasonForIncompletion: reason, ...(parentRef === undefined ? {} : { parentRef }) };
    if (node.optional) {
      this.commands.push({ kind: "completeTask", status: "COMPLETED_WITH_ERRORS", output: {}, ...common });
      this.lastFinished = row;
      this.resolved(node, iteration);
    } else {
      this.commands.push({ kind: "failTask", status: "FAILED_WITH_TERMINAL_ERROR", output: {}, ...common });
      this.failWorkflow(row, `Task ${node.ref} failed: ${reason}`);
    }
  }

  /**
   * Ends a row that exists: by taskId with compare-and-set on its status, or —
   * created in this very evaluation — as one terminal insert replacing its
   * scheduleTask, so an identity is never written twice.
   */
  private completeExisting(row: Row, status: "COMPLETED" | "COMPLETED_WITH_ERRORS", output: Json): void {
    this.commands.push({
      kind: "completeTask",
      key: keyOf(row),
      ...this.target(row),
      status,
      taskType: row.taskType,
      taskDefName: row.taskDefName,
      output,
      ...(row.reasonForIncompletion === undefined ? {} : { reasonForIncompletion: row.reasonForIncompletion }),
      ...(row.parentRef === undefined ? {} : { parentRef: row.parentRef }),
    });
    row.status = status;
    row.output = output;
    row.endedAt ??= this.now;
    row.seen = true;
  }

  private failExisting(row: Row, status: "FAILED" | "FAILED_WITH_TERMINAL_ERROR" | "TIMED_OUT", reason: string): void {
    this.commands.push({
      kind: "failTask",
      key: keyOf(row),
      ...this.target(row),
      status,
      taskType: row.taskType,
      taskDefName: row.taskDefName,
      reasonForIncompletion: reason,
      ...(row.parentRef === undefined ? {} : { parentRef: row.parentRef }),
    });
    row.status = status;
    row.reasonForIncompletion = reason;
    row.endedAt = this.now;
    row.seen = true;
  }

  /** How a command addresses an existing row: `taskId` + `from`, or (created in this evaluation) an insert carrying its input. */
  private target(row: Row): { taskId: string; from: TaskStatus } | { input: Json } {
    if (row.taskId !== undefined) return { taskId: row.taskId, from: row.status };
    this.retired.add(keyText(keyOf(row)));
    return { input: row.input };
  }

  /** Rewrites a non-terminal row's bookkeeping output: an updateTask, or for a row created in this evaluation its scheduleTask's output. */
  private updateOutput(row: Row, output: Json): void {
    row.output = output;
    const created = row.taskId === undefined ? this.createdCommands.get(keyText(keyOf(row))) : undefined;
    if (created !== undefined) created.output = output;
    else this.commands.push({ kind: "updateTask", key: keyOf(row), ...(row.taskId === undefined ? {} : { taskId: row.taskId }), from: row.status, output });
  }

  private switchNode(node: BlueprintNode, iteration: number, input: Json): void {
    const { evaluatorType, expression } = node.config;
    let value: unknown;
    if (evaluatorType === "value-param") {
      value = typeof expression === "string" && hasOwn(input, expression) ? input[expression] : null;
    } else {
      const result = this.deps.scripts.evaluate(String(expression), { $: input });
      if (!result.ok) return this.failNew(node, iteration, input, `SWITCH script failed: ${result.error}`);
      value = result.value;
    }
    const label = caseLabel(value);
    const cases = Array.isArray(node.config.cases) ? (node.config.cases as unknown[]) : [];
    if (label === null || !cases.includes(label)) this.diag("info", "switch-default", `SWITCH ${node.ref}: ${JSON.stringify(label)} matches no case; taking default`, node.ref);
    this.completeNew(node, iteration, input, { evaluationResult: [label] });
  }

  /** Conductor's JOIN output: each joined task's output by ref (tasks that ran; skipped branches are absent). */
  private joinOutput(node: BlueprintNode, iteration: number): Json {
    const on = Array.isArray(node.config.joinOn) ? (node.config.joinOn as string[]) : node.predecessors;
    const out: Json = {};
    for (const ref of on) {
      const row = this.rowAt(ref, this.iterationOf(ref, iteration)) ?? this.latest.get(ref);
      if (row !== undefined && isSuccess(row.status)) put(out, ref, row.output);
    }
    return out;
  }

  /** EXCLUSIVE_JOIN: the output of the first `joinOn` task that ran, else of the first default task that ran, else {}. */
  private exclusiveJoinOutput(node: BlueprintNode, iteration: number): Json {
    const lists = [Array.isArray(node.config.joinOn) ? (node.config.joinOn as string[]) : node.predecessors, Array.isArray(node.config.defaultExclusiveJoinTask) ? (node.config.defaultExclusiveJoinTask as string[]) : []];
    for (const list of lists) {
      for (const ref of list) {
        const row = this.rowAt(ref, this.iterationOf(ref, iteration)) ?? this.latest.get(ref);
        if (row !== undefined && isSuccess(row.status)) return row.output;
      }
    }
    return {};
  }

  /** The iteration a ref's row has when read from a node at `iteration`: body nodes share it, top-level nodes are at 0. */
  private iterationOf(ref: string, iteration: number): number {
    return this.node(ref)?.parent === null ? 0 : iteration;
  }

  private terminate(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const status = node.config.terminationStatus;
    const reasonValue = node.config.terminationReason === undefined ? undefined : this.resolve(node.config.terminationReason, context);
    const workflowOutput = node.config.workflowOutput === undefined ? undefined : asObject(this.resolve(node.config.workflowOutput, context));
    this.completeNew(node, iteration, input, { output: workflowOutput ?? {} });
    // Conductor: TERMINATE's workflowOutput replaces the output; without it, outputParameters still apply.
    const output = workflowOutput ?? (this.bp.outputParameters === null ? {} : asObject(this.resolve(this.bp.outputParameters)));
    const reason = reasonValue === undefined || reasonValue === null ? `Terminated by ${node.ref}` : typeof reasonValue === "string" ? reasonValue : JSON.stringify(reasonValue);
    if (status === "FAILED") {
      this.end({ kind: "failWorkflow", reason, failedTaskRef: node.ref, output, ...this.failureWorkflow(reason, "FAILED") });
    } else if (status === "TERMINATED") {
      this.end({ kind: "terminateWorkflow", reason, output });
    } else {
      this.end({ kind: "completeWorkflow", output });
    }
  }

  private wait(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const config = node.config;
    if (config.signal === true) {
      this.external(node, iteration, input);
      return;
    }
    let fireAt: number | null = null;
    if (config.duration !== undefined) {
      const duration = this.resolve(config.duration, context);
      put(input, "duration", duration);
      const seconds = waitDurationSeconds(duration);
      if (seconds === null) return this.failNew(node, iteration, input, `WAIT: ${JSON.stringify(duration)} is not a duration`);
      fireAt = this.now + seconds * 1000;
    } else if (config.until !== undefined) {
      const until = this.resolve(config.until, context);
      put(input, "until", until);
      fireAt = typeof until === "string" ? parseWaitUntil(until) : null;
      if (fireAt === null) return this.failNew(node, iteration, input, `WAIT: ${JSON.stringify(until)} is not a time decide can read (ISO-8601 with Z or an offset, or yyyy-MM-dd[ HH:mm[:ss]] [UTC])`);
    }
    if (fireAt === null) {
      this.external(node, iteration, input);
      return;
    }
    put(input, WAIT_UNTIL_KEY, fireAt);
    // Already due: complete now rather than arm a timer for the past (keeps decide idempotent at a fixed `now`).
    if (fireAt <= this.now) this.completeNew(node, iteration, input, {});
    else this.external(node, iteration, input);
  }

  // ---------------------------------------------------------------------------
  // DO_WHILE

  /**
   * Enters a loop: the DO_WHILE row (IN_PROGRESS, `output.iteration = 1`, for the
   * items form `index` and `item` too) and its body entries at iteration 1.
   * Conductor's do-while: the body runs at least once in the condition form; the
   * items form runs once per element, not at all for an empty list.
   */
  private startLoop(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const output: Json = { iteration: 1 };
    if (node.config.items !== undefined) {
      const items = this.resolve(node.config.items, context);
      if (!Array.isArray(items)) return this.failNew(node, iteration, input, `DO_WHILE: items resolved to ${items === null ? "null" : typeof items}, not an array`);
      put(input, "items", items);
      if (items.length === 0) return this.completeNew(node, iteration, input, { iteration: 0 });
      output.index = 0;
      output.item = items[0];
    }
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status: "IN_PROGRESS", taskType: "DO_WHILE", taskDefName: node.taskDefName, input, output });
    this.emitSchedule(row, node, "decider", this.now);
    for (const entry of node.bodyEntries) this.work.push({ kind: "eval", ref: entry, iteration: 1 });
  }

  /**
   * When every body node is resolved in the loop's current iteration: record the
   * iteration's outputs under `output["<i>"]` (Conductor's shape; keepLastN keeps
   * the last N), then start the next iteration or complete the loop.
   */
  private checkLoop(ref: string): void {
    const loop = this.latest.get(ref);
    const node = this.node(ref);
    if (loop === undefined || node === undefined || isTerminalTaskStatus(loop.status) || loop.taskType !== "DO_WHILE") return;
    const i = loopIteration(loop);
    const outputs: Json = {};
    for (const child of node.children) {
      const row = this.rowAt(child, i);
      if (row === undefined || !(isSuccess(row.status) || row.status === "SKIPPED")) return;
      if (row.status !== "SKIPPED") put(outputs, child, row.output);
    }
    const base = copy(loop.output);
    put(base, String(i), outputs);
    const keep = typeof node.config.keepLastN === "number" ? node.config.keepLastN : 0;
    if (keep > 0) for (let old = i - keep; old >= 1 && hasOwn(base, String(old)); old--) delete base[String(old)];

    let more: boolean;
    const items = loop.input.items;
    if (node.config.items !== undefined) {
      more = Array.isArray(items) && i < items.length;
    } else {
      const context = this.context();
      const $ = doWhileConditionInput({ resolvedInput: this.resolveInput(node, context), loopRef: ref, loopOutput: base, iteration: i, bodyOutputs: outputs as Record<string, Json> });
      const result = this.deps.scripts.evaluate(String(node.config.loopCondition), { $ });
      if (!result.ok) return this.failContainer(loop, node, `DO_WHILE condition failed: ${result.error}`);
      more = scriptResultToBoolean(result.value);
    }
    if (!more) {
      this.completeExisting(loop, "COMPLETED", base);
      this.lastFinished = loop;
      this.resolved(node, loop.iteration);
      return;
    }
    if (this.loopAdvances >= MAX_LOOP_ADVANCES_PER_EVALUATION) {
      if (!this.requestedEvaluation) this.commands.push({ kind: "requestEvaluation", reason: `DO_WHILE ${ref}: more than ${MAX_LOOP_ADVANCES_PER_EVALUATION} iterations in one evaluation` });
      this.requestedEvaluation = true;
      return;
    }
    this.loopAdvances++;
    const next = i + 1;
    put(base, "iteration", next);
    if (Array.isArray(items)) {
      put(base, "index", next - 1);
      put(base, "item", items[next - 1]);
    }
    this.updateOutput(loop, base);
    if (keep > 0 && next - keep + 1 > 1) this.commands.push({ kind: "pruneIterations", loopRef: ref, refs: [...node.children], belowIteration: next - keep + 1 });
    for (const entry of node.bodyEntries) this.work.push({ kind: "eval", ref: entry, iteration: next });
  }

  /** A loop or fork row failing from decide's own evaluation (never retried); its children in flight are canceled. */
  private failContainer(row: Row, node: BlueprintNode, reason: string): void {
    this.cancelChildren(row, `${row.ref} failed`);
    const forkTotal = row.taskType === "FORK_JOIN_DYNAMIC" ? this.forkTotal(row) : undefined;
    if (node.optional && forkTotal !== undefined) {
      this.aggregateFork(row, node, "COMPLETED_WITH_ERRORS", forkTotal, reason);
    } else if (node.optional) {
      row.reasonForIncompletion = reason;
      this.completeExisting(row, "COMPLETED_WITH_ERRORS", row.output);
      this.lastFinished = row;
      this.resolved(node, row.iteration);
    } else {
      this.failExisting(row, "FAILED_WITH_TERMINAL_ERROR", reason);
      this.failWorkflow(row, `Task ${row.ref} failed: ${reason}`);
    }
  }

  // ---------------------------------------------------------------------------
  // AGENT (the loop's rules: agent.ts)

  /** Starts an agent: its row (input: the `agent` fields resolved, output `{turn: 1}`) and the first model turn. */
  private startAgent(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const agentInput = asObject(this.resolve(node.config.agent, context));
    for (const key of Object.keys(agentInput)) put(input, key, agentInput[key]);
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const row = this.newRow({ ref: node.ref, iteration, attempt: 0, status: "IN_PROGRESS", taskType: "AGENT", taskDefName: node.taskDefName, input, output: { turn: 1, tokenUsage: usage } });
    this.emitSchedule(row, node, "decider", this.now);
    this.agentTask(node, 1, "LLM_CHAT_COMPLETE", "LLM_CHAT_COMPLETE", agentLlmRef(node.ref), firstTurnInput(input));
  }

  /** One row of an agent's turn: the model call or a tool call, parented to the agent, the turn as its iteration. */
  private agentTask(node: BlueprintNode, turn: number, taskType: string, taskDefName: string, ref: string, input: Json): void {
    const executor = executorOf(taskType);
    const row = this.newRow({ ref, iteration: turn, attempt: 0, status: initialStatus(executor, 0), taskType, taskDefName, input, parentRef: node.ref });
    this.emitSchedule(row, node, executor, this.now);
  }

  /**
   * Moves an agent on from its current turn's rows: the answer ends it; tool
   * calls are scheduled all at once; the calls all ended start the next turn.
   * Idempotent within an evaluation (a second check finds the rows the first made).
   */
  private checkAgent(ref: string): void {
    const agent = this.latest.get(ref);
    const node = this.node(ref);
    if (agent === undefined || node === undefined || isTerminalTaskStatus(agent.status) || agent.taskType !== "AGENT") return;
    const turn = typeof agent.output.turn === "number" && agent.output.turn >= 1 ? agent.output.turn : 1;
    const llm = this.rowAt(agentLlmRef(ref), turn);
    if (llm === undefined) {
      this.diag("warn", "agent-without-turn", `AGENT ${ref} is on turn ${turn} but its model call's row is not loaded`, ref);
      return;
    }
    if (!isSuccess(llm.status)) return;
    const usage = addUsage(usageOf(agent.output), usageOf(llm.output));
    const { maxTurns, tokenBudget } = agentLimits(agent.input);
    if (tokenBudget !== undefined && usage.totalTokens > tokenBudget) {
      return this.failContainer(agent, node, `AGENT used ${usage.totalTokens} tokens in ${turn} turn${turn === 1 ? "" : "s"}, over its tokenBudget of ${tokenBudget}`);
    }
    const calls = toolCallsOf(llm.output);
    if (calls.length === 0) {
      this.completeExisting(agent, "COMPLETED", agentAnswer(llm.output, turn, usage));
      this.lastFinished = agent;
      this.resolved(node, agent.iteration);
      return;
    }
    if (turn >= maxTurns) return this.failContainer(agent, node, `AGENT reached its limit of ${maxTurns} turn${maxTurns === 1 ? "" : "s"} and the model still asked for tools (${calls.map((c) => c.name).join(", ")})`);
    if (calls.length > AGENT_MAX_TOOL_CALLS_PER_TURN) return this.failContainer(agent, node, `AGENT: the model asked for ${calls.length} tool calls in turn ${turn}, more than the ${AGENT_MAX_TOOL_CALLS_PER_TURN} one turn may make`);
    const tools = agentTools(agent.input);
    // Per call, its result for the model once it has one; what a call still needs is scheduled on the way.
    const results = calls.map((call, k): string | undefined => {
      const tool = tools.find((t) => t.name === call.name);
      if (tool?.approval === true) {
        const approval = this.rowAt(agentApprovalRef(ref, k), turn);
        if (approval === undefined) {
          this.agentTask(node, turn, "HUMAN", "HUMAN", agentApprovalRef(ref, k), approvalInput(tool, call));
          return undefined;
        }
        if (!isTerminalTaskStatus(approval.status)) return undefined;
        if (!isApproved(approval)) return notApprovedText(approval);
      }
      const row = this.rowAt(agentToolRef(ref, k), turn);
      if (row === undefined) {
        const task = tool === undefined ? `the agent has no tool named ${JSON.stringify(call.name)} (it has ${tools.map((t) => JSON.stringify(t.name)).join(", ") || "none"})` : toolTask(tool, call);
        if (typeof task !== "string") {
          this.agentTask(node, turn, task.taskType, task.taskDefName, agentToolRef(ref, k), task.input);
          return undefined;
        }
        // A call that cannot run is a row too, ended at once: the model reads why in the next turn.
        const failedRow = this.newRow({ ref: agentToolRef(ref, k), iteration: turn, attempt: 0, status: "FAILED_WITH_TERMINAL_ERROR", taskType: tool?.type ?? "SIMPLE", taskDefName: call.name || "unknown", input: { arguments: call.arguments }, reasonForIncompletion: task, parentRef: ref });
        this.commands.push({ kind: "failTask", key: keyOf(failedRow), status: "FAILED_WITH_TERMINAL_ERROR", taskType: failedRow.taskType, taskDefName: failedRow.taskDefName, input: failedRow.input, output: {}, reasonForIncompletion: task, parentRef: ref });
        return toolResultText(failedRow);
      }
      // Ended for good: a success, or a failure with no retry after it (a retry would be the latest attempt, in flight).
      return isTerminalTaskStatus(row.status) && row.status !== "SKIPPED" ? toolResultText(row) : undefined;
    });
    if (results.some((r) => r === undefined)) return;
    const next = nextTurnInput(llm.input, llm.output, calls, results as string[]);
    this.agentTask(node, turn + 1, "LLM_CHAT_COMPLETE", "LLM_CHAT_COMPLETE", agentLlmRef(ref), next);
    this.updateOutput(agent, { ...agent.output, turn: turn + 1, tokenUsage: usage });
  }

  /** An agent's model call failed for good: the agent fails. A tool call or an approval failed for good: the model reads why next turn. */
  private agentChildFailed(agentRef: string, row: Row, role: "llm" | "tool" | "approval"): void {
    const agent = this.latest.get(agentRef);
    const node = this.node(agentRef);
    if (agent === undefined || node === undefined || isTerminalTaskStatus(agent.status)) return;
    if (role !== "llm") {
      this.work.push({ kind: "agent", ref: agentRef });
      return;
    }
    this.failContainer(agent, node, `turn ${row.iteration}'s model call ${row.status === "CANCELED" ? "was canceled" : "failed"}${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`);
  }

  // ---------------------------------------------------------------------------
  // FORK_JOIN_DYNAMIC

  /**
   * Spawns the instances, each a task `forkInstanceRef(ref, k)` with
   * `parentRef`/`forkIndex`, and the fork's own row (IN_PROGRESS, input
   * `forkedTasks` = instance names in index order, output `{ total: N,
   * completed: 0 }`).
   *
   * Cost per evaluation is O(instances that changed in it), never O(N)
   * (invariant 6): an evaluation reacting to k finished instances raises the
   * fork's `completed` by k (one small updateTask); nothing walks, copies or
   * rewrites N entries. When `completed` reaches `total`, decide asks the
   * shell to build the output from the instance rows (`aggregateForkOutput`,
   * one SQL statement) and the next evaluation reacts to the fork's end like
   * to any task's. Downstream, `${fork.output}` is Conductor's JOIN output:
   * items form `{ results: [o0, o1, …] }` in instance order, Conductor form
   * `{ <taskReferenceName>: output, … }`. See `AggregateForkOutputCommand`
   * for why the counter is exact, idempotent and crash-safe.
   */
  private fork(node: BlueprintNode, iteration: number, input: Json, context: ExpressionContext): void {
    const config = node.config;
    const itemsForm = config.dynamicForkTasksParam === undefined;
    const instances: { name: string; taskType: string; label: string; input: Json; sub?: { name: string; version?: number } }[] = [];
    if (itemsForm) {
      const items = this.resolve(config.items, context);
      if (!Array.isArray(items)) return this.failNew(node, iteration, input, `FORK_JOIN_DYNAMIC: items resolved to ${items === null ? "null" : typeof items}, not an array`);
      const taskType = typeof config.forkTaskType === "string" ? config.forkTaskType : "SIMPLE";
      const name = String(config.forkTaskName);
      items.forEach((item, k) => {
        instances.push({
          name,
          taskType,
          label: forkInstanceRef(node.ref, k),
          input: isPlainObject(item) ? item : { item },
          ...(taskType === "SUB_WORKFLOW" ? { sub: { name, ...(typeof config.forkTaskVersion === "number" ? { version: config.forkTaskVersion } : {}) } } : {}),
        });
      });
    } else {
      const tasks = input[String(config.dynamicForkTasksParam)];
      const inputsKey = config.dynamicForkTasksInputParamName;
      const inputs = typeof inputsKey === "string" ? asObject(input[inputsKey]) : {};
      if (!Array.isArray(tasks)) return this.failNew(node, iteration, input, `FORK_JOIN_DYNAMIC: input ${JSON.stringify(config.dynamicForkTasksParam)} is not a list of tasks`);
      const labels = new Set<string>();
      for (const [k, task] of tasks.entries()) {
        const t = asObject(task);
        const label = t.taskReferenceName;
        const name = typeof t.name === "string" ? t.name : undefined;
        const taskType = typeof t.type === "string" ? t.type : "SIMPLE";
        if (typeof label !== "string" || !REF_PATTERN.test(label) || labels.has(label) || name === undefined || !FORK_INSTANCE_TYPES.has(taskType)) {
          return this.failNew(node, iteration, input, `FORK_JOIN_DYNAMIC: task ${k} needs a unique taskReferenceName, a name and a type among ${[...FORK_INSTANCE_TYPES].join(", ")}`);
        }
        labels.add(label);
        const subParam = asObject(t.subWorkflowParam);
        instances.push({
          name,
          taskType,
          label,
          input: asObject(inputs[label]),
          ...(taskType === "SUB_WORKFLOW" ? { sub: { name: typeof subParam.name === "string" ? subParam.name : name, ...(typeof subParam.version === "number" ? { version: subParam.version } : {}) } } : {}),
        });
      }
    }
    put(input, "forkedTasks", instances.map((i) => i.label));
    if (instances.length === 0) return this.completeNew(node, iteration, input, itemsForm ? { results: [] } : {});
    const output: Json = { total: instances.length, completed: 0 };
    const forkRow = this.newRow({ ref: node.ref, iteration, attempt: 0, status: "IN_PROGRESS", taskType: "FORK_JOIN_DYNAMIC", taskDefName: node.taskDefName, input, output, parentRef: node.parent ?? undefined });
    this.emitSchedule(forkRow, node, "decider", this.now);
    instances.forEach((instance, k) => {
      const executor = executorOf(instance.taskType);
      const instanceInput: Json = copy(instance.input);
      if (instance.sub !== undefined) {
        put(instanceInput, "subWorkflowName", instance.sub.name);
        if (instance.sub.version !== undefined) put(instanceInput, "subWorkflowVersion", instance.sub.version);
      }
      const row = this.newRow({
        ref: forkInstanceRef(node.ref, k),
        iteration,
        attempt: 0,
        status: initialStatus(executor, node.policy.startDelay),
        taskType: instance.taskType,
        taskDefName: instance.name,
        input: instanceInput,
        parentRef: node.ref,
        forkIndex: k,
      });
      this.emitSchedule(row, node, executor, this.now + node.policy.startDelay * 1000);
    });
  }

  /** A fork instance ended successfully (its latest attempt): count it towards its fork, once. */
  private forkInstanceDone(forkRef: string, instance: Row): void {
    if (!isForkInstanceDone(instance.status)) return;
    const k = rowKey(forkRef, instance.iteration);
    let arrived = this.forkArrivals.get(k);
    if (arrived === undefined) this.forkArrivals.set(k, (arrived = new Set()));
    arrived.add(keyText(keyOf(instance)));
    this.queueForkCheck(forkRef, instance.iteration);
  }

  /**
   * The fork's instance count, `output.total`, written when decide created the
   * row. Never derived from `input` (its N labels): decide does not read a
   * running fork's input, so the evaluator need not load it (EvaluationState).
   */
  private forkTotal(fork: Row): number | undefined {
    const total = fork.output.total;
    return typeof total === "number" && Number.isInteger(total) && total >= 0 ? total : undefined;
  }

  /** Instances done: the count the row was loaded with plus those this evaluation reacted to. O(1). */
  private forkCompleted(fork: Row): number {
    const loaded = fork.output.completed;
    const base = typeof loaded === "number" && Number.isInteger(loaded) && loaded >= 0 ? loaded : 0;
    return base + (this.forkArrivals.get(rowKey(fork.ref, fork.iteration))?.size ?? 0);
  }

  /** Checks a fork in flight: O(1). Raises its counter, or — every instance done — has the shell aggregate and end it. */
  private checkFork(ref: string, iteration: number): void {
    const fork = this.rowAt(ref, iteration);
    const node = this.node(ref);
    if (fork === undefined || node === undefined || isTerminalTaskStatus(fork.status) || fork.taskType !== "FORK_JOIN_DYNAMIC" || this.aggregatingForks.has(fork)) return;
    const total = this.forkTotal(fork);
    if (total === undefined) {
      // Not a row decide wrote: never guess a count (a wrong one could end the fork early). Leave it for an operator.
      this.diag("warn", "fork-without-counters", `FORK_JOIN_DYNAMIC ${ref} has no instance counters (output.total); it cannot end`, ref);
      return;
    }
    if (this.forkCompleted(fork) < total) {
      if (this.forkArrivals.has(rowKey(ref, iteration))) this.dirtyForks.add(fork);
      return;
    }
    this.aggregateFork(fork, node, "COMPLETED", total);
  }

  /**
   * Ends a fork through the shell: `aggregateForkOutput` writes it terminal,
   * with the aggregated output, and unseen; `requestEvaluation` makes the next
   * evaluation react to it (successors, loop iteration end, workflow output),
   * reading that output. In this evaluation the fork stays in flight, so the
   * workflow cannot complete before its output exists.
   */
  private aggregateFork(fork: Row, node: BlueprintNode, status: "COMPLETED" | "COMPLETED_WITH_ERRORS", total: number, reason?: string): void {
    this.dirtyForks.delete(fork);
    this.aggregatingForks.add(fork);
    this.commands.push({
      kind: "aggregateForkOutput",
      key: keyOf(fork),
      ...(fork.taskId === undefined ? {} : { taskId: fork.taskId }),
      from: fork.status,
      status,
      shape: node.config.dynamicForkTasksParam === undefined ? "results" : "byTaskReferenceName",
      total,
      ...(reason === undefined ? {} : { reasonForIncompletion: reason }),
    });
    if (!this.requestedEvaluation) this.commands.push({ kind: "requestEvaluation", reason: `FORK_JOIN_DYNAMIC ${fork.ref} ended: react to its aggregated output` });
    this.requestedEvaluation = true;
  }

  private forkInstanceFailed(forkRef: string, instance: Row): void {
    const fork = this.rowAt(forkRef, instance.iteration);
    const node = this.node(forkRef);
    if (fork === undefined || node === undefined) {
      this.failWorkflow(instance, `Task ${instance.ref} failed${instance.reasonForIncompletion === undefined ? "" : `: ${instance.reasonForIncompletion}`}`);
      return;
    }
    // The fork already ended (another instance failed for good in this evaluation): nothing more to decide.
    if (isTerminalTaskStatus(fork.status) || this.aggregatingForks.has(fork)) return;
    this.dirtyForks.delete(fork);
    this.failContainer(fork, node, `instance ${instance.ref} ${instance.status}${instance.reasonForIncompletion === undefined ? "" : `: ${instance.reasonForIncompletion}`}`);
  }

  /**
   * Cancels a container's children in flight, and theirs: a DO_WHILE's body
   * rows (any running dynamic fork among them with its instances, which are in
   * the frontier while they run: parentRef = the fork, same iteration).
   */
  private cancelChildren(container: Row, reason: string): void {
    const isFork = container.taskType === "FORK_JOIN_DYNAMIC";
    for (const child of this.tracked) {
      if (child.parentRef !== container.ref || isTerminalTaskStatus(child.status)) continue;
      if (isFork && child.iteration !== container.iteration) continue;
      if (child.taskId !== undefined) this.commands.push({ kind: "cancelTask", key: keyOf(child), taskId: child.taskId, from: child.status, reason });
      else this.retired.add(keyText(keyOf(child)));
      child.status = "CANCELED";
      if (child.taskType === "FORK_JOIN_DYNAMIC" || child.taskType === "DO_WHILE") {
        this.dirtyForks.delete(child);
        if (this.aggregatingForks.delete(child)) {
          // Its aggregateForkOutput is moot now that it is canceled (and would break the cancel's compare-and-set).
          const kept = this.commands.filter((c) => !(c.kind === "aggregateForkOutput" && sameKey(c.key, keyOf(child))));
          this.commands.length = 0;
          this.commands.push(...kept);
        }
        this.cancelChildren(child, reason);
      }
    }
  }

  /** One small counter write per fork per evaluation, however many of its instances finished in it. */
  private flushForks(): void {
    if (this.ending !== undefined) return;
    for (const fork of [...this.dirtyForks].sort(compareRows)) {
      if (isTerminalTaskStatus(fork.status) || this.aggregatingForks.has(fork)) continue;
      const output = copy(fork.output);
      put(output, "completed", this.forkCompleted(fork));
      this.updateOutput(fork, output);
    }
  }

  private dropRetired(): void {
    if (this.retired.size === 0) return;
    const kept = this.commands.filter((c) => {
      switch (c.kind) {
        case "scheduleTask":
        case "startSubWorkflow":
        case "startWorkflow":
        case "updateTask":
        case "armTimer":
          return c.key === undefined || !this.retired.has(keyText(c.key));
        default:
          return true;
      }
    });
    this.commands.length = 0;
    this.commands.push(...kept);
  }

  // ---------------------------------------------------------------------------
  // Ending the workflow

  private end(command: WorkflowEndCommand): void {
    this.ending ??= command;
  }

  private failureWorkflow(reason: string, failureStatus: "FAILED" | "TIMED_OUT", failureTaskId?: string): { failureWorkflow?: FailureWorkflowStart } {
    if (this.bp.failureWorkflow === null) return {};
    const workflow = this.state.workflow;
    const input: Json = { workflowId: workflow.id, reason, failureStatus };
    if (failureTaskId !== undefined) input.failureTaskId = failureTaskId;
    // Conductor passes the failed workflow's execution JSON. Its task list is
    // left out: an evaluation never holds every task of a run (invariant 6),
    // and the failure workflow can read them by workflowId.
    const failedWorkflow: Json = {
      workflowId: workflow.id,
      workflowName: workflow.defName,
      workflowVersion: workflow.defVersion,
      status: failureStatus,
      reasonForIncompletion: reason,
      input: copy(workflow.input),
      variables: copy(this.variables),
      startTime: workflow.startedAt,
    };
    if (workflow.correlationId !== undefined) failedWorkflow.correlationId = workflow.correlationId;
    if (failureTaskId !== undefined) failedWorkflow.failedTaskId = failureTaskId;
    if (workflow.parentWorkflowId !== undefined) failedWorkflow.parentWorkflowId = workflow.parentWorkflowId;
    input.failedWorkflow = failedWorkflow;
    return { failureWorkflow: { name: this.bp.failureWorkflow, input } };
  }

  private failWorkflow(row: Row, reason: string): void {
    this.end({
      kind: "failWorkflow",
      reason,
      failedTaskRef: row.ref,
      ...(row.taskId === undefined ? {} : { failedTaskId: row.taskId }),
      output: {},
      ...this.failureWorkflow(reason, "FAILED", row.taskId),
    });
  }

  /** The workflow's output: its outputParameters resolved, or (none defined) the last finished task's output, as Conductor does. */
  private workflowOutput(): Json {
    if (this.bp.outputParameters !== null) return asObject(this.resolve(this.bp.outputParameters));
    return this.lastFinished === undefined ? {} : this.lastFinished.output;
  }

  private completeWorkflow(): void {
    this.commands.push({ kind: "completeWorkflow", output: this.workflowOutput() });
  }

  /**
   * The workflow ends in this evaluation: what it created and left in flight is
   * dropped rather than inserted and canceled (no child workflow, timer or queue
   * entry is ever started for it); every task already in flight is canceled; the
   * ending command comes last.
   */
  private finishEnding(): void {
    const dropped = new Set(this.tracked.filter((r) => r.created && !isTerminalTaskStatus(r.status)).map((r) => keyText(keyOf(r))));
    const isDropped = (key: TaskKey): boolean => dropped.has(keyText(key));
    // A delayed row started in this evaluation and still in flight is canceled as it was (SCHEDULED), never started.
    const unstarted = new Set<string>();
    for (const r of this.tracked) {
      const k = keyText(keyOf(r));
      if (!this.startedNow.has(k) || isTerminalTaskStatus(r.status)) continue;
      unstarted.add(k);
      r.status = "SCHEDULED";
    }
    const kept = this.commands.filter((c) => {
      switch (c.kind) {
        case "startTask":
          return !unstarted.has(keyText(c.key));
        case "scheduleTask":
        case "startSubWorkflow":
        case "startWorkflow":
          return !isDropped(c.key) && !unstarted.has(keyText(c.key));
        case "updateTask":
          return !isDropped(c.key);
        // A fork the shell was to end is canceled below instead.
        case "armTimer":
        case "requestEvaluation":
        case "aggregateForkOutput":
          return false;
        default:
          return true;
      }
    });
    this.commands.length = 0;
    this.commands.push(...kept);
    const reason = `Workflow ended: ${this.ending!.kind}`;
    for (const row of this.tracked.filter((r) => !r.created && !isTerminalTaskStatus(r.status)).sort(compareRows)) {
      if (row.taskId === undefined) continue;
      this.commands.push({ kind: "cancelTask", key: keyOf(row), taskId: row.taskId, from: row.status, reason });
      row.status = "CANCELED";
    }
    this.commands.push(this.ending!);
  }
}

/** The iteration a DO_WHILE row is on (`output.iteration`, from 1). */
function loopIteration(loop: Row): number {
  const i = loop.output.iteration;
  return typeof i === "number" && Number.isInteger(i) && i >= 1 ? i : 1;
}

/** The output handle a resolved SWITCH row took: its case when listed, else `default`; null when it took none (failed optional). */
function switchHandle(node: BlueprintNode, row: Row): string | null {
  const result = row.output.evaluationResult;
  if (!Array.isArray(result) || result.length === 0) return null;
  const label = caseLabel(result[0]);
  const cases = Array.isArray(node.config.cases) ? (node.config.cases as unknown[]) : [];
  return label !== null && label !== DEFAULT_CASE && cases.includes(label) ? label : DEFAULT_CASE;
}

/** Deterministic processing order: by end (or schedule) time, then identity, then id. */
function compareRows(a: Row, b: Row): number {
  return (
    (a.endedAt ?? a.scheduledAt) - (b.endedAt ?? b.scheduledAt) ||
    compareText(a.ref, b.ref) ||
    a.iteration - b.iteration ||
    a.attempt - b.attempt ||
    compareText(a.taskId ?? "", b.taskId ?? "")
  );
}
