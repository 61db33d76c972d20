import { jqTaskOutput } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { completed, failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * JSON_JQ_TRANSFORM: Conductor's JsonJqTransform. The filter in
 * `queryExpression` runs over the task's whole resolved input
 * (`queryExpression` included, as Conductor does); the output is `{ result,
 * resultList }`, or `{ error }` with the task FAILED. jq runs in its own
 * worker thread with a deadline and a heap cap (server/sandbox/jq-transform.ts).
 */

/** Runs a JSON_JQ_TRANSFORM task whose resolved input is `input`. Never throws. */
export async function runJqTask(input: Record<string, unknown>, jq: JqTransform, options: { timeoutMs?: number } = {}): Promise<SystemTaskOutcome> {
  const query = input.queryExpression;
  if (typeof query !== "string" || query.trim() === "") return failedTerminally("JSON_JQ_TRANSFORM: the input has no queryExpression");
  const output = jqTaskOutput(await jq.transform(input, query, options));
  if (!("error" in output)) return completed(output);
  const reason = `jq failed: ${output.error}`;
  // jq reports a filter that does not parse or names an unknown function as a
  // "compile error": the same on every attempt, so retrying is pointless.
  if (/\bcompile error/.test(output.error)) return failedTerminally(reason, output);
  return failed(reason, output);
}
