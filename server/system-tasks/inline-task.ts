import type { ScriptEvaluator } from "../../engine/expressions";
import { completed, failed, failedTerminally } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * INLINE: Conductor's Inline task. The decider puts `evaluatorType` and
 * `expression` into the input beside the node's own input; the script sees
 * the whole input as `$` and its value becomes `output.result`. A failure
 * puts the error in `output.error` and the reason, as Conductor does.
 *
 * The script runs in the QuickJS sandbox (server/sandbox/), which enforces the
 * time and memory limits: a script that loops forever or allocates without
 * bound comes back as `{ ok: false, error: "timed out after N ms" | "out of
 * memory" }` and the sandbox replaces its worker, so the next task runs on a
 * healthy one. `evaluate` is synchronous: while a script runs (at most its
 * timeout plus the kill grace) this process's event loop waits.
 */

export interface InlineTaskOptions {
  /** Per-script budget; the sandbox's own default (1 s) when absent. */
  timeoutMs?: number;
}

/** Runs an INLINE task whose resolved input is `input`. Never throws. */
export function runInlineTask(input: Record<string, unknown>, scripts: ScriptEvaluator, options: InlineTaskOptions = {}): SystemTaskOutcome {
  const evaluatorType = input.evaluatorType ?? "javascript";
  const expression = input.expression;
  if (typeof expression !== "string" || expression.trim() === "") return failedTerminally("INLINE: the input has no expression");

  if (evaluatorType === "value-param") {
    // Conductor's ValueParamEvaluator: the value of the input parameter the expression names.
    return completed({ result: input[expression] ?? null });
  }
  if (evaluatorType !== "javascript" && evaluatorType !== "graaljs") {
    return failedTerminally(`INLINE: unsupported evaluatorType ${JSON.stringify(evaluatorType)}: use "javascript" or "graaljs"`);
  }

  const result = scripts.evaluate(expression, { $: input }, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
  if (result.ok) return completed({ result: result.value });
  const reason = `INLINE script failed: ${result.error}`;
  // A script that does not parse fails the same way on every attempt.
  if (result.error.startsWith("SyntaxError")) return failedTerminally(reason, { error: result.error });
  return failed(reason, { error: result.error });
}
