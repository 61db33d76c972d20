import type { WorkflowDefinition, WorkflowNode } from "../definition";
import { resolveTemplate } from "../expressions";
import type { ExpressionContext, TaskView } from "../expressions";

/**
 * Testing one step of a draft: the task input the decider would build for a
 * node (`decide.ts` `schedule`), resolved against sample data instead of a
 * run — the workflow input the tester typed, and upstream nodes' outputs from
 * the definition's pins (or given outright). What runs it is the server's
 * system-task runner in its sandbox (server/definitions/test-step.ts).
 */

/** The node types a step test can run, and what runs them. */
export const TESTABLE_STEP_TYPES = ["HTTP", "INLINE", "JSON_JQ_TRANSFORM", "SIMPLE", "LLM_CHAT_COMPLETE", "LLM_TEXT_COMPLETE"] as const;

/** A node type a step test can run. */
export type TestableStepType = (typeof TESTABLE_STEP_TYPES)[number];

/** The data a step is tested with. */
export interface StepSample {
  /** `${workflow.input…}`. */
  input?: Record<string, unknown>;
  /** `${workflow.variables…}`, over the definition's initial variables. */
  variables?: Record<string, unknown>;
  /** Upstream outputs by ref (`${ref.output…}`), over the definition's pins. */
  outputs?: Record<string, Record<string, unknown>>;
}

/** The resolved task input of a step, or why the step cannot be tested. */
export type StepTaskInput = { ok: true; taskType: TestableStepType; input: Record<string, unknown> } | { ok: false; reason: string };

const TESTABLE: ReadonlySet<string> = new Set(TESTABLE_STEP_TYPES);

function isTestable(node: WorkflowNode): node is Extract<WorkflowNode, { type: TestableStepType }> {
  return TESTABLE.has(node.type);
}

/**
 * The input the node's task would be sent, resolved against `sample`.
 * `${workflow.secrets…}` stays `***` and `${workflow.env…}` its own text: a
 * step test never reads the namespace's secrets.
 */
export function stepTaskInput(definition: WorkflowDefinition, ref: string, sample: StepSample = {}): StepTaskInput {
  const node = definition.nodes.find((n) => n.ref === ref);
  if (node === undefined) return { ok: false, reason: `No node ${JSON.stringify(ref)}` };
  if (!isTestable(node)) return { ok: false, reason: `A ${node.type} node cannot be tested on its own: test HTTP, INLINE, JSON_JQ_TRANSFORM, chat and text completions and worker tasks` };
  const outputs: Record<string, Record<string, unknown>> = { ...definition.pins, ...sample.outputs };
  const byRef = new Map(definition.nodes.map((n) => [n.ref, n]));
  const context: ExpressionContext = {
    workflow: {
      workflowId: "step-test",
      workflowType: definition.name,
      version: definition.version ?? 0,
      status: "RUNNING",
      input: sample.input ?? {},
      variables: { ...definition.variables, ...sample.variables },
      startTime: 0,
    },
    task(name: string): TaskView | undefined {
      if (!Object.hasOwn(outputs, name)) return undefined;
      return {
        taskId: `step-test-${name}`,
        referenceTaskName: name,
        taskType: byRef.get(name)?.type ?? "SIMPLE",
        status: "COMPLETED",
        input: {},
        output: outputs[name]!,
        iteration: 0,
        retryCount: 0,
      };
    },
  };
  const resolved = resolveTemplate(node.input ?? {}, context);
  const input: Record<string, unknown> = typeof resolved === "object" && resolved !== null && !Array.isArray(resolved) ? { ...(resolved as Record<string, unknown>) } : {};
  switch (node.type) {
    case "HTTP":
      input.http_request = resolveTemplate(node.httpRequest, context);
      break;
    case "INLINE":
      input.evaluatorType = node.evaluatorType;
      input.expression = node.expression;
      break;
    case "JSON_JQ_TRANSFORM":
      input.queryExpression = node.queryExpression;
      break;
    case "LLM_CHAT_COMPLETE":
    case "LLM_TEXT_COMPLETE": {
      // As the decider does: the node's llm fields go into the task input beside the rest.
      const llm = resolveTemplate(node.llm, context);
      // defineProperty, not assignment: a "__proto__" key stays a key (decide.ts `put`).
      if (typeof llm === "object" && llm !== null && !Array.isArray(llm)) {
        for (const [key, value] of Object.entries(llm)) Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
      }
      break;
    }
    case "SIMPLE":
      break;
  }
  return { ok: true, taskType: node.type, input };
}
