import { simulate, SimulationSetupError } from "../../engine/testkit";
import type { SimulatedTask, SimulationResult } from "../../engine/testkit";
import { NODE_TYPE_NAMES } from "../../engine/definition";
import type { NodeType, WorkflowDefinition, WorkflowNode } from "../../engine/definition";
import type { ScriptEvaluator } from "../../engine/expressions";
import type { TaskStatus, WorkflowStatus } from "../../engine/statuses";
import type { JqTransform } from "../sandbox/jq-transform";
import { runHttpTask } from "../system-tasks/http-task";
import type { HttpTaskOptions } from "../system-tasks/http-task";
import { runInlineTask } from "../system-tasks/inline-task";
import { runJqTask } from "../system-tasks/jq-task";
import type { SystemTaskOutcome } from "../system-tasks/system-task-outcome";
import { TEST_STEP_LIMITS } from "./test-step";

/**
 * Test a whole workflow: the draft on screen, run to its end by the testkit
 * (engine/testkit/simulate.ts) — the real compile and decide, in memory, on a
 * virtual clock — with the draft's pins standing in for the nodes they pin.
 * Nothing is stored: no run row, no task row, no decide queue row; the
 * decider's work happens in this process's memory only, the way `nf test`
 * runs a workflow in CI. Invariant 1 is about runs, and this is none.
 *
 * What each node does:
 * - a pinned node is not executed: it completes at once with its pin as its
 *   output (every iteration, inside a loop). Pins on nodes the decider
 *   decides itself (SWITCH, JOIN, DO_WHILE, SET_VARIABLE, TERMINATE, …) are
 *   not used — what those do follows from their inputs — and are reported;
 * - INLINE runs in the QuickJS sandbox, JSON_JQ_TRANSFORM in jq, HTTP for
 *   real through the same executor and SSRF guard as a step test
 *   (test-step.ts), under the same short budgets;
 * - any other node that needs something outside (a worker task, an LLM, a
 *   HUMAN, a signal WAIT, a stored sub-workflow) and has no pin fails with
 *   "no pin: …", terminally: the run then ends as a run would with that task
 *   failed, and the path shows how far it got. Failing rather than stopping
 *   is what the run would do, so optional tasks and failure branches are
 *   exercised as they would be.
 *
 * Secrets read as `***`, as in a step test: decide masks them and nothing
 * here resolves them.
 */

export interface TestWorkflowDeps {
  /** Sandboxes, created on first use by the caller (the web process shares one pair with step tests). */
  sandbox: () => Promise<{ scripts: ScriptEvaluator; jq: JqTransform }>;
  http: HttpTaskOptions;
  /** Wall clock, epoch ms: the start of the virtual clock, and the time budget. */
  now?: () => number;
}

export interface TestWorkflowInput {
  definition: WorkflowDefinition;
  input: Record<string, unknown>;
}

/** One task attempt of a test run. */
export interface TestedTask {
  id: string;
  ref: string;
  /** The node's type in the draft (a pinned node's stand-in is not shown). */
  type: string;
  iteration: number;
  attempt: number;
  status: TaskStatus;
  pinned: boolean;
  input: unknown;
  output: unknown;
  /** Input or output over {@link TEST_WORKFLOW_LIMITS.payloadBytes}: left out (null). */
  truncated: boolean;
  reason: string | null;
  /** ISO times on the virtual clock, which starts at the wall clock's now. */
  scheduledAt: string;
  startedAt: string | null;
  endedAt: string | null;
  parentRef: string | null;
  forkIndex: number | null;
}

export type TestWorkflowResult =
  | {
      ok: true;
      status: WorkflowStatus;
      /** The run's output; null when too large to send back. */
      output: unknown;
      reason: string | null;
      /** Why the run stopped before a terminal status (too many steps, waiting on nothing). */
      stopped: { code: string; message: string } | null;
      /** The refs that ran, in the order they were first scheduled (skipped and canceled ones left out). */
      path: string[];
      /** Every task attempt, in the order the rows were created. */
      tasks: TestedTask[];
      /** Refs that failed for want of a pin. */
      missingPins: string[];
      /** Pinned refs whose pin was not used (the decider decides those nodes). */
      ignoredPins: string[];
      evaluations: number;
    }
  | { ok: false; reason: string };

/** A test run's bounds: the web process waits for the answer. */
export const TEST_WORKFLOW_LIMITS = Object.freeze({ maxSteps: 2_000, wallClockMs: 30_000, payloadBytes: 64 * 1024 });

/** Nodes the decider completes by itself: a pin on one has nothing to stand in for. */
const DECIDED_TYPES: ReadonlySet<NodeType> = new Set(["SWITCH", "JOIN", "EXCLUSIVE_JOIN", "FORK_JOIN_DYNAMIC", "DO_WHILE", "SET_VARIABLE", "TERMINATE", "NOOP"]);

/**
 * The task name a pinned node's stand-in is dispatched under. A SIMPLE node
 * keeps its ref, place and input, so edges, expressions and the blueprint's
 * reads are the draft's; only what runs it changes.
 */
const STAND_IN = "node_flow_test_stand_in";

export function noPinReason(ref: string): string {
  return `no pin: pin an output for ${ref} or test it alone`;
}

/** Runs `request.definition` (already validated by the caller) on `request.input`. Never throws for the workflow's own failures. */
export async function testWorkflow(deps: TestWorkflowDeps, request: TestWorkflowInput): Promise<TestWorkflowResult> {
  const now = deps.now ?? Date.now;
  const started = now();
  const deadline = started + TEST_WORKFLOW_LIMITS.wallClockMs;
  const pins = request.definition.pins ?? {};
  const original = new Map(request.definition.nodes.map((n) => [n.ref, n]));
  const pinned = new Set<string>();
  const ignoredPins: string[] = [];
  /** Stand-ins for nodes that need the outside world and have no pin: they fail with the reason. */
  const missing = new Set<string>();

  const nodes = request.definition.nodes.map((node): WorkflowNode => {
    const pin = Object.hasOwn(pins, node.ref) ? pins[node.ref] : undefined;
    if (pin !== undefined) {
      if (DECIDED_TYPES.has(node.type)) {
        ignoredPins.push(node.ref);
        return node;
      }
      pinned.add(node.ref);
      return standIn(node);
    }
    // A stored sub-workflow is not loaded: testing the workflow tests this draft, the child is tested on its own.
    if (node.type === "SUB_WORKFLOW" && node.workflowDefinition === undefined) {
      missing.add(node.ref);
      return standIn(node);
    }
    return node;
  });
  const definition: WorkflowDefinition = { ...request.definition, nodes };
  for (const ref of Object.keys(pins)) if (!original.has(ref)) ignoredPins.push(ref);

  const { scripts: sandboxScripts, jq } = await deps.sandbox();
  const overBudget = () => now() > deadline;
  const budgetReason = `the test run used up its ${TEST_WORKFLOW_LIMITS.wallClockMs / 1000} s`;
  // SWITCH and DO_WHILE scripts run inside decide: the budget reaches them through the evaluator.
  const scripts: ScriptEvaluator = {
    evaluate: (script, bindings, options) => (overBudget() ? { ok: false, error: budgetReason } : sandboxScripts.evaluate(script, bindings, options)),
  };
  const missingPins: string[] = [];
  const fail = (ref: string) => {
    if (!missingPins.includes(ref)) missingPins.push(ref);
    return { status: "FAILED_WITH_TERMINAL_ERROR" as const, reason: noPinReason(ref) };
  };

  const handler = async (task: SimulatedTask) => {
    if (task.taskDefName === STAND_IN) {
      if (missing.has(task.ref)) return fail(task.ref);
      const pin = pins[task.ref];
      if (pin !== undefined) return { status: "COMPLETED" as const, output: structuredClone(pin) };
    }
    if (overBudget()) return { status: "FAILED_WITH_TERMINAL_ERROR" as const, reason: budgetReason };
    switch (task.taskType) {
      case "INLINE":
        return outcome(runInlineTask(task.input, scripts, { timeoutMs: TEST_STEP_LIMITS.inlineTimeoutMs }));
      case "JSON_JQ_TRANSFORM":
        return outcome(await runJqTask(task.input, jq, { timeoutMs: TEST_STEP_LIMITS.jqTimeoutMs }));
      case "HTTP": {
        const remaining = Math.max(1, deadline - now());
        const maxDurationMs = Math.min(deps.http.maxDurationMs ?? Infinity, TEST_STEP_LIMITS.httpMaxDurationMs, remaining);
        return outcome(await runHttpTask(task.input, { ...deps.http, maxDurationMs }));
      }
      case "EVENT": {
        // Published nowhere: what the testkit's own EVENT does, for an EVENT whose name routed it here.
        const sink = typeof task.input.sink === "string" ? task.input.sink : "";
        return { status: "COMPLETED" as const, output: { event_produced: sink, ...task.input } };
      }
      default:
        return fail(task.ref);
    }
  };
  // simulate looks workers up by task name, then type: every type that is dispatched, and every name in the draft.
  const workers: Record<string, typeof handler> = { [STAND_IN]: handler };
  for (const type of NODE_TYPE_NAMES) if (type !== "EVENT") workers[type] = handler;
  for (const name of taskNames(request.definition)) workers[name] = handler;
  // An unpinned signal WAIT has nobody to signal it.
  const signals = Object.fromEntries(
    nodes.filter((n) => n.type === "WAIT" && n.duration === undefined && n.until === undefined).map((n) => [n.ref, (task: SimulatedTask) => fail(task.ref)]),
  );

  let result: SimulationResult;
  try {
    result = await simulate(definition, request.input, workers, { scripts, signals, maxSteps: TEST_WORKFLOW_LIMITS.maxSteps, startTime: started, workflowId: "test-run" });
  } catch (error) {
    if (error instanceof SimulationSetupError) return { ok: false, reason: `The workflow cannot be tested: ${error.message}` };
    throw error;
  }

  const path: string[] = [];
  for (const t of result.tasks) if (t.status !== "SKIPPED" && t.status !== "CANCELED" && !path.includes(t.ref)) path.push(t.ref);
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const tasks = result.tasks.map((t): TestedTask => {
    const input = capped(t.input);
    const output = capped(t.output);
    return {
      id: t.taskId,
      ref: t.ref,
      type: original.get(t.ref)?.type ?? t.taskType,
      iteration: t.iteration,
      attempt: t.attempt,
      status: t.status,
      pinned: pinned.has(t.ref) && t.taskDefName === STAND_IN,
      input: input.value,
      output: output.value,
      truncated: input.truncated || output.truncated,
      reason: t.reasonForIncompletion ?? null,
      scheduledAt: iso(t.scheduledAt)!,
      startedAt: iso(t.startedAt),
      endedAt: iso(t.endedAt),
      parentRef: t.parentRef ?? null,
      forkIndex: t.forkIndex ?? null,
    };
  });
  return {
    ok: true,
    status: result.status,
    output: capped(result.output).value,
    reason: result.reasonForIncompletion ?? null,
    stopped: result.error === undefined ? null : { code: result.error.code, message: result.error.message },
    path,
    tasks,
    missingPins,
    ignoredPins,
    evaluations: result.evaluations,
  };
}

function standIn(node: WorkflowNode): WorkflowNode {
  const stand: WorkflowNode = { ref: node.ref, type: "SIMPLE", name: STAND_IN, position: node.position };
  if (node.parent !== undefined) stand.parent = node.parent;
  if (node.input !== undefined) stand.input = node.input;
  return stand;
}

/** Task names a draft dispatches under, inline sub-workflows included (their tasks meet the same handler). */
function taskNames(definition: WorkflowDefinition): string[] {
  const names = new Set<string>();
  const visit = (d: WorkflowDefinition) => {
    for (const node of d.nodes) {
      if ("name" in node && typeof node.name === "string") names.add(node.name);
      if (node.type === "SUB_WORKFLOW" && node.workflowDefinition !== undefined) visit(node.workflowDefinition);
    }
  };
  visit(definition);
  return [...names];
}

/** A system task's outcome in the testkit's terms. */
function outcome(o: SystemTaskOutcome) {
  if (o.status === "COMPLETED") return { status: "COMPLETED" as const, output: o.output };
  if (o.status === "IN_PROGRESS") return { status: "IN_PROGRESS" as const, output: o.output, callbackAfterSeconds: o.callbackAfterSeconds ?? 1 };
  return { status: o.status, output: o.output, reason: o.reason ?? "failed" };
}

/** A payload for the answer, or null when it is too large to send back whole. */
function capped(value: unknown): { value: unknown; truncated: boolean } {
  const text = JSON.stringify(value ?? null);
  return Buffer.byteLength(text, "utf8") > TEST_WORKFLOW_LIMITS.payloadBytes ? { value: null, truncated: true } : { value, truncated: false };
}
