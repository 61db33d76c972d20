/**
 * decide(blueprint, state, now, deps) → commands: the pure decider, its state
 * and command types (invariants 4–6), and the policy arithmetic it uses.
 */
export { MAX_LOOP_ADVANCES_PER_EVALUATION, WAIT_UNTIL_KEY, decide, executorOf } from "./decide";
export { dispatchSites, dispatchTemplate, nodeInputTemplate } from "./dispatch-template";
export { AGENT_TOOL_INPUT_KEY, agentToolDispatchSites } from "./agent";
export type { DispatchSite } from "./dispatch-template";
export { FORK_INSTANCE_DONE_STATUSES, aggregateForkOutput, isForkInstanceDone } from "./fork-output";
export type { ForkProgress } from "./fork-output";
export { MAX_DELAY_SECONDS, attemptDelaySeconds, parseWaitUntil, retryDelaySeconds, waitDurationSeconds } from "./policy";
export type * from "./types";
