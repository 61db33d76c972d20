import { isTerminalTaskStatus } from "../engine/statuses";
import type { WorkflowDefinition } from "../engine/definition";
import type { ScriptEvaluator } from "../engine/expressions";
import { formatTaskKey, simulate } from "../engine/testkit";
import type { SimulatedTask, SimulationResult, TaskOutcome, Workers, WorkflowHistory } from "../engine/testkit";
import type { Run, RunTask } from "../sdk";

/**
 * Turns a production run into the testkit's {@link WorkflowHistory}, so
 * `replay` can re-run it through today's decider (`nf replay`).
 *
 * The server records what happened — every task attempt with its status and
 * output (GET /runs/{id}) and the run's events (GET /runs/{id}/history) — but
 * not the commands each evaluation returned. So the history is rebuilt:
 * the definition version the run ran on is simulated with every task's
 * recorded result fed back (a worker that answers what the real one
 * answered, a signal with the output it carried), and the simulation records
 * the evaluations. Each step is held against production: a task today's
 * decider schedules that production never ran, one production ran that it
 * never schedules, a node it skips or cancels that production did not, or a
 * different end — any of these is the first divergence, "the decider now
 * decides differently from how this run went". When none is found, the
 * rebuilt history is faithful to the run and `replay` against another
 * definition version (the latest, by default) says whether a run like it
 * would go the same way under that version.
 *
 * What cannot be rebuilt is refused by name: operator actions (retry, rerun,
 * restart, skip, pause, terminate) change a run from outside the decider, and
 * SUB_WORKFLOW children are runs of their own (replay each by its id). A
 * TIMED_OUT attempt is fed back as a failure with its reason.
 */

/** History event types written by an operator, not the decider: a history with one cannot be rebuilt from task results. */
const OPERATOR_EVENTS: ReadonlySet<string> = new Set([
  "WORKFLOW_RETRIED",
  "WORKFLOW_RERUN",
  "WORKFLOW_RESTARTED",
  "WORKFLOW_PAUSED",
  "WORKFLOW_RESUMED",
  "TASK_SKIPPED_BY_OPERATOR",
  "TERMINATE_REQUESTED",
  "WORKFLOW_TERMINATED",
]);

/** One recorded event, as GET /runs/{id}/history lists it. */
export interface RecordedEvent {
  seq: number;
  at: string;
  type: string;
  ref: string | null;
  status: string | null;
}

/** Why a run cannot be rebuilt as a history. */
export class UnreplayableRunError extends Error {
  override name = "UnreplayableRunError";
}

/** Where today's decider, on the run's own definition version, parts from what production did. */
export interface ProductionDivergence {
  what: string;
}

export interface RebuiltHistory {
  history: WorkflowHistory;
  simulation: SimulationResult;
  /** The first way the rebuilt run differs from production; undefined when it matches. */
  divergence: ProductionDivergence | undefined;
}

const keyOf = (t: { ref: string; iteration: number; attempt: number }) => `${t.ref}[${t.iteration}.${t.attempt}]`;

function recordedOutcome(task: RunTask): TaskOutcome {
  const output = (typeof task.output === "object" && task.output !== null && !Array.isArray(task.output) ? task.output : {}) as Record<string, unknown>;
  const reason = task.reasonForIncompletion ?? task.status;
  switch (task.status) {
    case "COMPLETED":
    case "COMPLETED_WITH_ERRORS":
      return { status: "COMPLETED", output };
    case "FAILED_WITH_TERMINAL_ERROR":
      return { status: "FAILED_WITH_TERMINAL_ERROR", output, reason };
    case "FAILED":
    case "TIMED_OUT":
      return { status: "FAILED", output, reason };
    default:
      // Still open in production: it stays open here, asked again far in the (virtual) future.
      return { status: "IN_PROGRESS", callbackAfterSeconds: 31_536_000, output };
  }
}

/** Rebuilds `run` (ran on `recordedDefinition`) as a testkit history and checks it against production. */
export async function rebuildHistory(
  run: Run,
  tasks: readonly RunTask[],
  events: readonly RecordedEvent[],
  recordedDefinition: WorkflowDefinition,
  scripts: ScriptEvaluator,
): Promise<RebuiltHistory> {
  const operator = events.find((e) => OPERATOR_EVENTS.has(e.type));
  if (operator !== undefined) {
    throw new UnreplayableRunError(`run ${run.id} was changed by an operator (${operator.type} at event ${operator.seq}, ${operator.at}); a history is rebuilt from the decider's work alone, so only runs no one retried, reran, restarted, skipped, paused or terminated can be replayed`);
  }
  const child = tasks.find((t) => t.taskType === "SUB_WORKFLOW");
  if (child !== undefined) {
    throw new UnreplayableRunError(`run ${run.id} started a sub-workflow at node "${child.refName}"${child.subWorkflowId ? ` (run ${child.subWorkflowId})` : ""}; a child run has its own history: replay it by its id`);
  }
  const recorded = new Map(tasks.map((t) => [keyOf({ ref: t.refName, iteration: t.iteration, attempt: t.attempt }), t]));
  const unexpected: string[] = [];
  const answer = (task: SimulatedTask): TaskOutcome => {
    const row = recorded.get(keyOf(task));
    if (row === undefined) {
      unexpected.push(`today's decider schedules ${formatTaskKey(task)} (${task.taskType}), which production never ran`);
      return { status: "IN_PROGRESS", callbackAfterSeconds: 31_536_000 };
    }
    return recordedOutcome(row);
  };
  const workers: Workers = {};
  for (const t of tasks) {
    (workers as Record<string, unknown>)[t.taskDefName] = answer;
    (workers as Record<string, unknown>)[t.taskType] = answer;
  }
  const signals: Record<string, (task: SimulatedTask) => TaskOutcome> = {};
  for (const node of recordedDefinition.nodes as readonly { ref: string; type: string; name?: string; duration?: string; until?: string }[]) {
    (workers as Record<string, unknown>)[node.type] ??= answer;
    if (node.name !== undefined) (workers as Record<string, unknown>)[node.name] ??= answer;
    // A WAIT for a duration or a time is ended by the clock, not by its recorded result.
    if (node.type === "HUMAN" || (node.type === "WAIT" && node.duration === undefined && node.until === undefined)) signals[node.ref] = answer;
  }
  const simulation = await simulate(recordedDefinition, (run.input ?? {}) as Record<string, unknown>, workers, {
    scripts,
    signals,
    humans: signals,
    workflowId: run.id,
    startTime: Date.parse(run.startedAt),
    // An open task is asked again a year later each time: bound the loop to the run's size.
    maxSteps: 8 * (tasks.length + 10),
    ...(run.correlationId === null ? {} : { correlationId: run.correlationId }),
    priority: run.priority,
  });
  return { history: simulation.history, simulation, divergence: unexpected[0] !== undefined ? { what: unexpected[0] } : compareWithProduction(run, tasks, simulation) };
}

function compareWithProduction(run: Run, tasks: readonly RunTask[], simulation: SimulationResult): ProductionDivergence | undefined {
  const simulated = new Map(simulation.tasks.map((t) => [keyOf(t), t]));
  for (const t of tasks) {
    const s = simulated.get(keyOf({ ref: t.refName, iteration: t.iteration, attempt: t.attempt }));
    if (s === undefined) return { what: `production ran ${keyOf({ ref: t.refName, iteration: t.iteration, attempt: t.attempt })} (${t.taskType}, ${t.status}), which today's decider never schedules` };
    // The decider alone sets these; a worker's statuses were fed back, so they match by construction.
    const decided = (status: string) => status === "SKIPPED" || status === "CANCELED";
    if ((decided(t.status) || decided(s.status)) && s.status !== t.status) return { what: `${keyOf(s)} is ${s.status} under today's decider; production recorded ${t.status}` };
  }
  const ended = run.endedAt !== null;
  if (ended && simulation.status !== run.status) return { what: `the run ends ${simulation.status} under today's decider${simulation.reasonForIncompletion ? ` (${simulation.reasonForIncompletion})` : ""}; production ended ${run.status}` };
  if (ended && simulation.status === "COMPLETED" && JSON.stringify(sorted(simulation.output)) !== JSON.stringify(sorted(run.output))) {
    return { what: `the run's output is ${JSON.stringify(simulation.output)} under today's decider; production's was ${JSON.stringify(run.output)}` };
  }
  for (const t of simulation.tasks) if (!isTerminalTaskStatus(t.status) && run.endedAt !== null && !recordedHas(tasks, t)) return { what: `${keyOf(t)} is left ${t.status}` };
  return undefined;
}

function recordedHas(tasks: readonly RunTask[], t: { ref: string; iteration: number; attempt: number }): boolean {
  return tasks.some((r) => r.refName === t.ref && r.iteration === t.iteration && r.attempt === t.attempt);
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
}
