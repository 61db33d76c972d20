import type { Db } from "@/db/pool";
import { stepTaskInput } from "../../engine/step-test";
import type { StepSample, TestableStepType } from "../../engine/step-test";
import type { WorkflowDefinition } from "../../engine/definition";
import type { ScriptEvaluator } from "../../engine/expressions";
import { runLlmTask } from "../ai/llm-tasks";
import type { SecretLookup } from "../lib/secret-lookup";
import type { JqTransform } from "../sandbox/jq-transform";
import { runHttpTask } from "../system-tasks/http-task";
import type { HttpTaskOptions } from "../system-tasks/http-task";
import { runInlineTask } from "../system-tasks/inline-task";
import { runJqTask } from "../system-tasks/jq-task";
import type { SystemTaskOutcome } from "../system-tasks/system-task-outcome";

/**
 * Test a step: run one node of a draft on sample data and answer with what it
 * produced, nothing stored. The node's input is resolved by the engine against
 * the sample and the draft's pinned outputs (`stepTaskInput`); then the same
 * executor a run's task meets runs it, under the same guards — INLINE in the
 * QuickJS sandbox, jq in its worker, HTTP through the SSRF guard with the
 * installation's private-network setting. A worker task is not sent to a
 * worker: its output is the mocked output the tester gives. A chat or text
 * completion calls the namespace's provider through the sidecar's executor
 * (server/ai/llm-tasks.ts): the provider's key is read from its secret there,
 * sent to the provider and redacted out of the output and the reason; a 429
 * or 5xx, which a run would wait out and retry, fails the test saying so.
 *
 * This is no evaluation of a workflow (invariant 1): no decide runs, no row is
 * written, no run exists; it is the one task, as the sidecar's system-task
 * runner would run it. The step's own secrets are never read here:
 * `${workflow.secrets.X}` reaches the task as `***` (docs/console.md, "Test step").
 */

export interface TestStepDeps {
  /** Sandboxes, created on first use by the caller: the web process has none until a step is tested. */
  sandbox: () => Promise<{ scripts: ScriptEvaluator; jq: JqTransform }>;
  http: HttpTaskOptions;
  /** For chat and text completions: the namespace whose AI providers and secrets the call uses. */
  llm?: { db: Db; namespaceId: string; secrets: SecretLookup };
}

export interface TestStepInput {
  definition: WorkflowDefinition;
  ref: string;
  sample: StepSample;
  /** A worker task's output for the test (required for SIMPLE). */
  mockOutput?: Record<string, unknown>;
}

/** What a tested step came to. */
export type TestStepResult =
  | {
      ok: true;
      taskType: TestableStepType;
      status: SystemTaskOutcome["status"];
      /** The input the task was given. */
      input: Record<string, unknown>;
      output: Record<string, unknown>;
      reason: string | null;
      mocked: boolean;
    }
  | { ok: false; reason: string };

/** A test's own budgets: short, since the web process waits for the answer. */
export const TEST_STEP_LIMITS = Object.freeze({ inlineTimeoutMs: 1_000, jqTimeoutMs: 2_000, httpMaxDurationMs: 15_000, llmMaxDurationMs: 60_000 });

/** Runs one step of `definition` with `sample`. Never throws for a step's own failure. */
export async function testStep(deps: TestStepDeps, request: TestStepInput): Promise<TestStepResult> {
  const step = stepTaskInput(request.definition, request.ref, request.sample);
  if (!step.ok) return step;
  const { taskType, input } = step;
  const done = (outcome: Pick<SystemTaskOutcome, "status" | "output" | "reason">, mocked = false): TestStepResult => ({
    ok: true,
    taskType,
    status: outcome.status,
    input,
    output: outcome.output,
    reason: outcome.reason ?? null,
    mocked,
  });
  switch (taskType) {
    case "SIMPLE":
      if (request.mockOutput === undefined) return { ok: false, reason: "A worker task is tested with a mocked output: give mockOutput" };
      return done({ status: "COMPLETED", output: request.mockOutput }, true);
    case "HTTP":
      return done(await runHttpTask(input, { ...deps.http, maxDurationMs: Math.min(deps.http.maxDurationMs ?? Infinity, TEST_STEP_LIMITS.httpMaxDurationMs) }));
    case "INLINE": {
      const { scripts } = await deps.sandbox();
      return done(runInlineTask(input, scripts, { timeoutMs: TEST_STEP_LIMITS.inlineTimeoutMs }));
    }
    case "JSON_JQ_TRANSFORM": {
      const { jq } = await deps.sandbox();
      return done(await runJqTask(input, jq, { timeoutMs: TEST_STEP_LIMITS.jqTimeoutMs }));
    }
    case "LLM_CHAT_COMPLETE":
    case "LLM_TEXT_COMPLETE": {
      if (deps.llm === undefined) return { ok: false, reason: `A ${taskType} step needs the namespace's AI providers, which this caller does not give` };
      const { db, namespaceId, secrets } = deps.llm;
      const http = { ...deps.http, maxDurationMs: Math.min(deps.http.maxDurationMs ?? Infinity, TEST_STEP_LIMITS.llmMaxDurationMs) };
      const outcome = await runLlmTask({ namespaceId, taskType, pollCount: 1 }, input, { db, secrets, http });
      if (outcome.status !== "IN_PROGRESS") return done(outcome);
      // A run would put the task back on its queue and retry; a test answers now.
      const { waiting, ...output } = outcome.output as { waiting?: { reason?: string; retryAfterSeconds?: number } };
      const wait = waiting?.retryAfterSeconds === undefined ? "" : ` (a run would retry in ${waiting.retryAfterSeconds} s)`;
      return done({ status: "FAILED", output, reason: `${waiting?.reason ?? `${taskType} task: the provider asked to retry later`}${wait}` });
    }
  }
}
