import type { ScriptEvaluator, ScriptResult } from "../expressions";

/**
 * A ScriptEvaluator for tests: each script text the workflow uses maps to a
 * plain function of `$`. A script not in the table, or a function that
 * throws, is a failed evaluation (`{ ok: false }`), as a sandbox error would
 * be. The real sandbox (QuickJS) lives in server/; this one lets a unit test
 * of a workflow with SWITCH/INLINE/DO_WHILE scripts run with no runtime.
 *
 * @example
 * ```ts
 * const scripts = scriptTable({ "$.amount > 100": ($) => ($.amount as number) > 100 });
 * await simulate(definition, { amount: 250 }, workers, { scripts });
 * ```
 */
export function scriptTable(table: Readonly<Record<string, ($: Record<string, unknown>) => unknown>>): ScriptEvaluator {
  return {
    evaluate(script, bindings): ScriptResult {
      if (!Object.prototype.hasOwnProperty.call(table, script)) return { ok: false, error: `scriptTable: no entry for ${JSON.stringify(script)}` };
      try {
        const value: unknown = table[script]!(bindings.$ as Record<string, unknown>);
        // A sandbox copies its value out as JSON; so does this.
        return { ok: true, value: value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown) };
      } catch (e) {
        return { ok: false, error: e instanceof Error ? e.message : String(e) };
      }
    },
  };
}
