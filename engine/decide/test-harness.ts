/**
 * A deliberately small in-memory shell for the decider's own tests: it
 * applies commands to rows, builds `EvaluationState` exactly as the server's
 * evaluator must (frontier + `refsToLoad`), and checks on every step that no
 * identity is inserted twice and that deciding again changes nothing. The
 * full simulator (workers, virtual clock, history, replay) is engine/testkit.
 */
import { validateDefinition } from "../definition";
import type { ScriptEvaluator, ScriptResult } from "../expressions";
import type { TaskStatus } from "../statuses";
import { isTerminalTaskStatus } from "../statuses";
import type { Blueprint } from "../compile";
import { compile, forkInstanceRef, refsToLoad } from "../compile";
import { aggregateForkOutput, isForkInstanceDone } from "./fork-output";
import { decide } from "./decide";
import type { Command, Decision, EvaluationState, FiredTimer, TaskKey, TaskSnapshot, WorkflowEndCommand, WorkflowSnapshot } from "./types";

/** A stored row: the snapshot plus what the queue would know. */
export interface StoredRow extends TaskSnapshot {
  runAt?: number;
  executor?: string;
}

/** A ScriptEvaluator for tests: known scripts map to functions of `$`. */
export function fakeScripts(scripts: Record<string, ($: Record<string, unknown>) => unknown>): ScriptEvaluator {
  return {
    evaluate(script, bindings): ScriptResult {
      const $ = bindings.$ as Record<string, unknown>;
      const fn = Object.prototype.hasOwnProperty.call(scripts, script) ? scripts[script] : undefined;
      if (fn !== undefined) {
        try {
          return { ok: true, value: fn($) };
        } catch (e) {
          return { ok: false, error: String(e) };
        }
      }
      // The palette's default loop condition: $["ref"].iteration < $.times
      const loop = /^\$\[("(?:[^"\\]|\\.)*")\]\.iteration < \$\.times$/.exec(script);
      if (loop !== null) {
        const ref = JSON.parse(loop[1]!) as string;
        const iteration = ($[ref] as { iteration: number }).iteration;
        return { ok: true, value: iteration < Number($.times) };
      }
      return { ok: false, error: `unknown script ${script}` };
    },
  };
}

const keyText = (k: TaskKey): string => `${k.ref}|${k.iteration}|${k.attempt}`;

/** Options for {@link Harness}. */
export interface HarnessOptions {
  input?: Record<string, unknown>;
  now?: number;
  scripts?: ScriptEvaluator;
  /** Also decide on a state holding every latest row, and require the same commands (refsToLoad is sufficient). */
  checkPartialState?: boolean;
  /** Decide again after applying and require no commands (idempotence). Default true. */
  checkIdempotent?: boolean;
}

/** The in-memory shell. */
export class Harness {
  readonly blueprint: Blueprint;
  readonly rows: StoredRow[] = [];
  readonly history: Command[][] = [];
  workflow: WorkflowSnapshot & { output?: Record<string, unknown>; end?: WorkflowEndCommand };
  now: number;
  timers: { timer: string; key?: TaskKey; fireAt: number }[] = [];
  started: { kind: string; key: TaskKey; name: string; input: Record<string, unknown> }[] = [];
  private nextId = 1;
  private readonly scripts: ScriptEvaluator;
  private readonly options: HarnessOptions;

  constructor(definition: unknown, options: HarnessOptions = {}) {
    const valid = validateDefinition(definition);
    if (!valid.ok) throw new Error(`invalid test definition: ${JSON.stringify(valid.problems)}`);
    this.blueprint = JSON.parse(JSON.stringify(compile(valid.definition))) as Blueprint;
    this.options = options;
    this.now = options.now ?? 1_000_000;
    this.scripts = options.scripts ?? fakeScripts({});
    const def = valid.definition;
    this.workflow = {
      id: "wf-1",
      defName: def.name,
      defVersion: def.version ?? 1,
      status: "RUNNING",
      input: options.input ?? {},
      variables: (def.variables ?? {}),
      startedAt: this.now,
      version: 0,
    };
  }

  /** The state an evaluator builds: frontier, then refsToLoad's refs' latest rows. */
  state(firedTimers?: FiredTimer[], everything = false): EvaluationState {
    const frontier = this.rows.filter((r) => !isTerminalTaskStatus(r.status) || !r.seen).map(snapshot);
    let refs: string[];
    if (everything) {
      refs = [...new Set(this.rows.map((r) => r.ref))];
    } else {
      refs = refsToLoad(
        this.blueprint,
        frontier.filter((r) => !isTerminalTaskStatus(r.status)).map((r) => r.ref),
        frontier.filter((r) => isTerminalTaskStatus(r.status)).map((r) => ({ ref: r.ref, status: r.status })),
      );
    }
    const wanted = new Set(refs);
    const latest = new Map<string, StoredRow>();
    for (const r of this.rows) {
      if (!wanted.has(r.ref)) continue;
      const l = latest.get(r.ref);
      if (l === undefined || r.iteration > l.iteration || (r.iteration === l.iteration && r.attempt > l.attempt)) latest.set(r.ref, r);
    }
    return { workflow: { ...this.workflow, variables: { ...this.workflow.variables } }, frontier, loaded: [...latest.values()].map(snapshot), ...(firedTimers === undefined ? {} : { firedTimers }) };
  }

  /** One evaluation: decide, apply, and check idempotence (and optionally partial-state sufficiency). */
  evaluate(firedTimers?: FiredTimer[]): Decision {
    const decision = decide(this.blueprint, this.state(firedTimers), this.now, { scripts: this.scripts });
    if (this.options.checkPartialState === true) {
      const full = decide(this.blueprint, this.state(firedTimers, true), this.now, { scripts: this.scripts });
      if (JSON.stringify(full.commands) !== JSON.stringify(decision.commands)) {
        throw new Error(`partial state decided differently:\n partial ${JSON.stringify(decision.commands)}\n full    ${JSON.stringify(full.commands)}`);
      }
    }
    this.apply(decision.commands);
    this.history.push(decision.commands);
    if (this.options.checkIdempotent !== false && !decision.commands.some((c) => c.kind === "requestEvaluation")) {
      const again = decide(this.blueprint, this.state(), this.now, { scripts: this.scripts });
      if (again.commands.length > 0) throw new Error(`not idempotent: deciding again gave ${JSON.stringify(again.commands)}`);
    }
    this.workflow.version++;
    return decision;
  }

  apply(commands: readonly Command[]): void {
    for (const c of commands) {
      switch (c.kind) {
        case "scheduleTask":
          this.insert(c.key, { status: c.status, taskType: c.taskType, taskDefName: c.taskDefName, input: c.input, output: c.output, runAt: c.runAt, executor: c.executor, parentRef: c.parentRef, forkIndex: c.forkIndex, firstScheduledAt: c.firstScheduledAt, seen: false });
          break;
        case "completeTask":
        case "failTask": {
          if (c.taskId === undefined) {
            this.insert(c.key, { status: c.status, taskType: c.taskType, taskDefName: c.taskDefName, input: c.input ?? {}, output: c.output ?? {}, reasonForIncompletion: c.reasonForIncompletion, parentRef: c.parentRef, seen: true, endedAt: this.now });
          } else {
            const row = this.byId(c.taskId, c.from);
            row.status = c.status;
            if (c.output !== undefined) row.output = c.output;
            if (c.reasonForIncompletion !== undefined) row.reasonForIncompletion = c.reasonForIncompletion;
            row.endedAt ??= this.now;
            row.seen = true;
          }
          break;
        }
        case "skipTask":
          this.insert(c.key, { status: "SKIPPED", taskType: c.taskType, taskDefName: c.taskDefName, input: {}, output: {}, parentRef: c.parentRef, seen: true, endedAt: this.now });
          break;
        case "cancelTask": {
          const row = this.byId(c.taskId, c.from);
          row.status = "CANCELED";
          row.endedAt = this.now;
          row.seen = true;
          break;
        }
        case "startTask": {
          const row = this.byId(c.taskId, c.from);
          row.status = "IN_PROGRESS";
          row.startedAt = this.now;
          row.input = c.input;
          break;
        }
        case "updateTask": {
          const row = c.taskId === undefined ? this.byKey(c.key) : this.byId(c.taskId, c.from);
          row.output = c.output;
          break;
        }
        case "aggregateForkOutput": {
          // As the evaluator's SQL (see AggregateForkOutputCommand): every instance's successful attempt, fork ends unseen.
          const fork = c.taskId === undefined ? this.byKey(c.key) : this.byId(c.taskId, c.from);
          if (fork.status !== c.from) throw new Error(`compare-and-set failed on ${fork.ref}: ${fork.status} ≠ ${c.from}`);
          const outputs = Array.from({ length: c.total }, (_, k) => {
            const ref = forkInstanceRef(c.key.ref, k);
            return this.rows.find((r) => r.ref === ref && r.iteration === c.key.iteration && isForkInstanceDone(r.status))?.output;
          });
          const done = outputs.filter((o) => o !== undefined).length;
          if (c.status === "COMPLETED" && done !== c.total) throw new Error(`aggregateForkOutput: ${done} of ${c.total} instances of ${fork.ref} are done`);
          fork.status = c.status;
          fork.output = aggregateForkOutput(c.shape, Array.isArray(fork.input.forkedTasks) ? (fork.input.forkedTasks as unknown[]) : [], outputs);
          if (c.reasonForIncompletion !== undefined) fork.reasonForIncompletion = c.reasonForIncompletion;
          fork.endedAt = this.now;
          fork.seen = false;
          break;
        }
        case "setVariables":
          this.workflow.variables = c.variables;
          break;
        case "armTimer":
          this.timers.push({ timer: c.timer, ...(c.key === undefined ? {} : { key: c.key }), fireAt: c.fireAt });
          break;
        case "cancelTimer":
          this.timers = this.timers.filter((t) => t.key === undefined || keyText(t.key) !== keyText(c.key));
          break;
        case "startSubWorkflow":
        case "startWorkflow":
          this.started.push({ kind: c.kind, key: c.key, name: c.name, input: c.input });
          break;
        case "markSeen":
          for (const id of c.taskIds) this.byId(id).seen = true;
          break;
        case "pruneIterations": {
          const refs = new Set(c.refs);
          for (let i = this.rows.length - 1; i >= 0; i--) {
            const r = this.rows[i]!;
            if (refs.has(r.ref) && r.iteration < c.belowIteration) this.rows.splice(i, 1);
          }
          break;
        }
        case "alert":
        case "requestEvaluation":
          break;
        case "completeWorkflow":
        case "failWorkflow":
        case "terminateWorkflow":
        case "timeOutWorkflow":
          this.workflow.status = { completeWorkflow: "COMPLETED", failWorkflow: "FAILED", terminateWorkflow: "TERMINATED", timeOutWorkflow: "TIMED_OUT" }[c.kind] as WorkflowSnapshot["status"];
          this.workflow.output = c.output;
          this.workflow.end = c;
          this.timers = [];
          break;
      }
    }
  }

  private insert(key: TaskKey, fields: Partial<StoredRow> & Pick<StoredRow, "status" | "taskType" | "input" | "output" | "seen">): void {
    if (this.rows.some((r) => r.ref === key.ref && r.iteration === key.iteration && r.attempt === key.attempt)) {
      throw new Error(`identity ${keyText(key)} inserted twice`);
    }
    const row: StoredRow = { taskId: `t${this.nextId++}`, ...key, scheduledAt: this.now, ...stripUndefined(fields) };
    if (row.status !== "SCHEDULED") row.startedAt = this.now;
    this.rows.push(row);
  }

  byId(taskId: string, from?: TaskStatus): StoredRow {
    const row = this.rows.find((r) => r.taskId === taskId);
    if (row === undefined) throw new Error(`no task ${taskId}`);
    if (from !== undefined && row.status !== from) throw new Error(`compare-and-set failed on ${row.ref}: ${row.status} ≠ ${from}`);
    return row;
  }

  byKey(key: TaskKey): StoredRow {
    const row = this.rows.find((r) => r.ref === key.ref && r.iteration === key.iteration && r.attempt === key.attempt);
    if (row === undefined) throw new Error(`no task ${keyText(key)}`);
    return row;
  }

  /** The latest attempt of `ref` at `iteration` (default: latest iteration). */
  task(ref: string, iteration?: number): StoredRow {
    let best: StoredRow | undefined;
    for (const r of this.rows) {
      if (r.ref !== ref || (iteration !== undefined && r.iteration !== iteration)) continue;
      if (best === undefined || r.iteration > best.iteration || (r.iteration === best.iteration && r.attempt > best.attempt)) best = r;
    }
    if (best === undefined) throw new Error(`no row for ${ref}`);
    return best;
  }

  has(ref: string): boolean {
    return this.rows.some((r) => r.ref === ref);
  }

  /** Queued tasks a worker could take now (SCHEDULED or IN_PROGRESS, worker/system, visible). */
  runnable(): StoredRow[] {
    return this.rows.filter((r) => !isTerminalTaskStatus(r.status) && (r.executor === "worker" || r.executor === "system") && (r.runAt ?? 0) <= this.now);
  }

  /** A worker polls the task: IN_PROGRESS from now. */
  poll(ref: string, iteration?: number): StoredRow {
    const row = this.task(ref, iteration);
    row.status = "IN_PROGRESS";
    row.startedAt = this.now;
    return row;
  }

  /** A worker (or API) completes the latest attempt of `ref`. */
  complete(ref: string, output: Record<string, unknown> = {}, iteration?: number): StoredRow {
    return this.finish(this.task(ref, iteration), "COMPLETED", output);
  }

  fail(ref: string, reason = "boom", status: "FAILED" | "FAILED_WITH_TERMINAL_ERROR" = "FAILED", iteration?: number): StoredRow {
    const row = this.finish(this.task(ref, iteration), status, {});
    row.reasonForIncompletion = reason;
    return row;
  }

  finish(row: StoredRow, status: TaskStatus, output: Record<string, unknown>): StoredRow {
    if (isTerminalTaskStatus(row.status)) throw new Error(`${row.ref} is already ${row.status}`);
    row.status = status;
    row.output = output;
    row.startedAt ??= this.now;
    row.endedAt = this.now;
    row.seen = false;
    return row;
  }

  /** Commands of the last evaluation of a kind. */
  last<K extends Command["kind"]>(kind: K): Extract<Command, { kind: K }>[] {
    return (this.history[this.history.length - 1] ?? []).filter((c): c is Extract<Command, { kind: K }> => c.kind === kind);
  }

  /** The last evaluation asked for another (`requestEvaluation`: a loop paused, a fork ended through the shell). */
  get needsEvaluation(): boolean {
    return this.last("requestEvaluation").length > 0;
  }

  /** Refs scheduled (inserted non-terminal) by the last evaluation. */
  scheduled(): string[] {
    return this.last("scheduleTask").map((c) => (c.key.iteration > 0 ? `${c.key.ref}@${c.key.iteration}` : c.key.ref) + (c.key.attempt > 0 ? `#a${c.key.attempt}` : ""));
  }
}

function snapshot(r: StoredRow): TaskSnapshot {
  const { runAt: _runAt, executor: _executor, ...rest } = r;
  return JSON.parse(JSON.stringify(rest)) as TaskSnapshot;
}

function stripUndefined<T extends object>(obj: T): T {
  const out = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}
