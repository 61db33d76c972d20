/**
 * The testkit, exported for users: `simulate` runs a workflow to its end in
 * memory with the real decider (workers as plain functions, a virtual clock),
 * and `replay` re-runs a recorded history through today's decider and reports
 * the first divergence.
 */
export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS, DEFAULT_START_TIME, simulate } from "./simulate";
export type { Decider, HandlerOrResult, SimulateOptions, SimulatedTaskRecord, SimulationStop, SimulationResult, StartedWorkflow, Workers } from "./simulate";
export { SimulationSetupError } from "./setup-error";
export { completed, failed, inProgress, terminalError } from "./task-results";
export { scriptTable } from "./script-table";
export type { SimulatedTask, TaskHandler, TaskOutcome, TaskResultLike } from "./task-results";
export { replay } from "./replay";
export { compareCommands } from "./command-diff";
export type { ReplayDivergence, ReplayMatch, ReplayOptions, ReplayResult } from "./replay";
export { HISTORY_FORMAT, HISTORY_VERSION, HistoryFormatError, describeCommand, formatTaskKey, parseHistory } from "./history";
export type { EvaluatedEvent, HistoryEvent, HistoryWorkflow, TaskPolledEvent, TaskUpdateSource, TaskUpdatedEvent, TimerFiredEvent, WorkflowHistory } from "./history";
