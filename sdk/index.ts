/**
 * node-flow's SDK for remote workers and automation: a typed HTTP client
 * (`createNodeFlowClient`), a worker (`createWorker`), and worker modules
 * (`defineWorker`, run by `nf worker` or `startWorker`). Plain `fetch`, no
 * database driver, no server code.
 */
export { NodeFlowApiError, NodeFlowNetworkError } from "./api-error";
export type { NodeFlowApiErrorInit, Problem, ProblemFieldError } from "./api-error";
export type {
  DefinitionInput,
  DefinitionProblem,
  DefinitionValidation,
  DefinitionVersion,
  HeartbeatResult,
  IdempotencyStrategy,
  JsonObject,
  Page,
  PollTasksInput,
  PolledTask,
  RegisteredDefinition,
  ReleaseResult,
  ReportNext,
  ReportResult,
  Run,
  RunActionResult,
  RunSummary,
  RunTask,
  RunTaskActionResult,
  SearchRunsQuery,
  StartRunInput,
  StartedRun,
  TaskDefinition,
  TaskDefinitionInput,
  TaskLogPage,
  TaskRef,
  WorkerReportStatus,
} from "./api-types";
export { createNodeFlowClient } from "./http-client";
export type { CallOptions, NodeFlowClient, NodeFlowClientOptions, ReadinessReport, StartRunOptions } from "./http-client";
export type { RetryInfo, Transport, TransportOptions, TransportRequest, TransportResponse } from "./http-transport";
export { DEFAULT_RETRY_OPTIONS } from "./retry-policy";
export type { RetryOptions } from "./retry-policy";
export { defineWorker, startWorker, workerDefinitionProblem } from "./define-worker";
export type { QueueHandler, WorkerConnection, WorkerDefinition, WorkerDefinitionOptions } from "./define-worker";
export { createWorker } from "./worker";
export type {
  NodeFlowWorker,
  ShutdownPolicy,
  StopOptions,
  StopResult,
  TaskContext,
  TaskHandler,
  TaskOutcome,
  WorkerEvent,
  WorkerLogger,
  WorkerOptions,
  WorkerStats,
  WorkerTask,
} from "./worker";
export { LeaseLostError, TerminalError, WorkerShutdownError } from "./worker-errors";
