/**
 * Small helpers both sandboxes (jq-transform.ts, quickjs-script-evaluator.ts)
 * use on the host side. Their worker hosts are not shared on purpose: jq runs
 * jobs asynchronously through a queue and messages, QuickJS answers
 * synchronously through Atomics.wait on shared memory.
 */

/** `value` when it is a finite positive number, else `fallback` (limits from options). */
export function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The first line of an error's message, for a one-line problem report. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n", 1)[0] ?? text;
}
