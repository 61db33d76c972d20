/**
 * Small helpers both sandboxes (jq-transform.ts, quickjs-script-evaluator.ts)
 * use on the host side. Their worker hosts are not shared on purpose: jq runs
 * jobs asynchronously through a queue and messages, QuickJS answers
 * synchronously through Atomics.wait on shared memory.
 */

/**
 * The file a package's main entry resolves to, for a worker that loads it by
 * absolute path. Node's own `createRequire` is fetched at run time on
 * purpose: Next's bundler (the web process runs the sandboxes to test a step)
 * rewrites `require.resolve("x")` into its module id and refuses a computed
 * one, and a worker can load neither.
 */
export function resolvePackageFile(name: string): string {
  return process.getBuiltinModule("node:module").createRequire(import.meta.url).resolve(name);
}

/** `value` when it is a finite positive number, else `fallback` (limits from options). */
export function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The first line of an error's message, for a one-line problem report. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n", 1)[0] ?? text;
}
