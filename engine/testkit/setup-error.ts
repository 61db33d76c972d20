import type { Problem } from "../definition";
import type { ScriptEvaluator } from "../expressions";

/**
 * A run the simulation cannot carry out: an invalid definition; a missing
 * worker, scripts or sub-workflow; or, under `checkIdempotence` /
 * `checkLoading`, a decider that breaks what the evaluator relies on.
 */
export class SimulationSetupError extends Error {
  readonly code: "invalid-definition" | "scripts-required" | "missing-worker" | "missing-sub-workflow" | "too-deep" | "not-idempotent" | "loading-insufficient";
  readonly problems?: Problem[];
  constructor(code: SimulationSetupError["code"], message: string, problems?: Problem[]) {
    super(message);
    this.name = "SimulationSetupError";
    this.code = code;
    if (problems !== undefined) this.problems = problems;
  }
}

/** A ScriptEvaluator that refuses: passed to decide when the caller gave none. */
export function scriptsUnavailable(workflow: string): ScriptEvaluator {
  return {
    evaluate: (script) => {
      throw new SimulationSetupError("scripts-required", `workflow ${workflow} evaluated a script (${JSON.stringify(script.slice(0, 60))}) but no options.scripts was given`);
    },
  };
}
