/**
 * The seam between the pure engine and sandboxed JavaScript. INLINE tasks,
 * SWITCH with `evaluatorType: "javascript"`/`"graaljs"` and DO_WHILE conditions
 * run user scripts; the engine only depends on this interface, and the runtime
 * (server/) implements it with a QuickJS sandbox — never `node:vm`, which is no
 * security boundary.
 *
 * Bindings follow Conductor's ScriptEvaluator (conductor-oss/conductor,
 * core/src/main/java/com/netflix/conductor/core/events/ScriptEvaluator.java),
 * which binds exactly one name, `$`:
 *
 * - INLINE: `$` is the task's resolved input, so `$.value` reads
 *   `inputParameters.value` (the input also holds `evaluatorType` and
 *   `expression`). The task's output is `{ result: <value> }`.
 * - SWITCH (javascript): `$` is the SWITCH task's resolved input; the value,
 *   as text, picks the case.
 * - DO_WHILE: `$` is built by {@link doWhileConditionInput}: the loop task's
 *   resolved input, plus `$.<loopRef>` = the loop task's output with
 *   `iteration`, plus `$.<bodyRef>` = each body task's latest output (by ref,
 *   without the `__<iteration>` suffix). So
 *   `$.loop_ref['iteration'] < $.max && $.fetch_ref.hasMore` works as in
 *   Conductor (DoWhile.evaluateCondition).
 *
 * Call it as `evaluate(script, { $: input })`.
 */

/** Limits for one evaluation; the implementation picks defaults when absent. */
export interface ScriptEvaluationOptions {
  /** Wall-clock budget; the sandbox interrupts the script past it. */
  timeoutMs?: number;
  /** Heap the script may use. */
  memoryBytes?: number;
}

/**
 * The outcome of a script: its value (JSON-compatible: the sandbox copies it
 * out, never hands over a live object) or why it failed — a syntax error, a
 * thrown exception, a timeout or the memory limit.
 */
export type ScriptResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Evaluates JavaScript in a sandbox. Synchronous because `decide()` is: the
 * implementation must bound time and memory itself and never touch the host
 * (no I/O, no clock, no globals beyond the bindings, which are deep-copied in).
 */
export interface ScriptEvaluator {
  /**
   * Runs `script` with each key of `bindings` as a global (Conductor scripts
   * use only `$`) and returns the value of its last expression statement.
   * Never throws: every failure is `{ ok: false }`.
   */
  evaluate(script: string, bindings: Record<string, unknown>, options?: ScriptEvaluationOptions): ScriptResult;
}

/**
 * Conductor's `ScriptEvaluator.toBoolean`, used for DO_WHILE conditions: a
 * boolean is itself, a number is true when greater than 0, anything else
 * (strings, objects, null) is false.
 */
export function scriptResultToBoolean(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value > 0;
  return false;
}

/** What {@link doWhileConditionInput} needs about a loop. */
export interface DoWhileConditionSource {
  /** The DO_WHILE task's inputParameters, already resolved with `resolveTemplate`. */
  resolvedInput: Record<string, unknown>;
  /** The DO_WHILE task's reference name. */
  loopRef: string;
  /** The DO_WHILE task's output so far. */
  loopOutput: Record<string, unknown>;
  /** The current iteration (1-based, as Conductor counts). */
  iteration: number;
  /** The latest output of each body task, keyed by reference name without the `__<iteration>` suffix. */
  bodyOutputs: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * The `$` a DO_WHILE condition sees, built the way Conductor's
 * DoWhile.evaluateCondition builds it: resolved input, then the loop's own
 * output under its ref (with `iteration` unless the output already has one),
 * then each body task's output under its ref.
 */
export function doWhileConditionInput(source: DoWhileConditionSource): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const put = (key: string, value: unknown): void => {
    Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
  };
  for (const [key, value] of Object.entries(source.resolvedInput)) put(key, value);
  const loop: Record<string, unknown> = { ...source.loopOutput };
  if (!Object.prototype.hasOwnProperty.call(loop, "iteration")) loop.iteration = source.iteration;
  put(source.loopRef, loop);
  for (const [ref, output] of Object.entries(source.bodyOutputs)) {
    if (ref !== source.loopRef) put(ref, output);
  }
  return input;
}
