/**
 * Operator actions on workflows, one verb-noun file each. Every action takes
 * `{ db, blobs?, now? }`, validates its input with zod, acts only inside the
 * given namespace, runs in one transaction, writes WorkflowEvents and
 * AuditEvents, and returns a result or a refusal `{ ok: false, code, message }`
 * — it never throws for a user error.
 */
export { ActorSchema } from "./action-support";
export type { ActionRefusal, Actor, WorkflowActionDeps } from "./action-support";
export { pauseWorkflow, PauseWorkflowInputSchema } from "./pause-workflow";
export type { PauseWorkflowInput, PauseWorkflowResult } from "./pause-workflow";
export { resumeWorkflow, ResumeWorkflowInputSchema } from "./resume-workflow";
export type { ResumeWorkflowInput, ResumeWorkflowResult } from "./resume-workflow";
export { terminateWorkflow, TerminateWorkflowInputSchema } from "./terminate-workflow";
export type { TerminateWorkflowInput, TerminateWorkflowResult } from "./terminate-workflow";
export { retryWorkflow, RetryWorkflowInputSchema } from "./retry-workflow";
export type { RetryWorkflowInput, RetryWorkflowResult } from "./retry-workflow";
export type { ReopenedTask } from "./reopen-failed-tasks";
export { rerunWorkflow, RerunWorkflowInputSchema } from "./rerun-workflow";
export type { RerunWorkflowInput, RerunWorkflowResult } from "./rerun-workflow";
export { restartWorkflow, RestartWorkflowInputSchema } from "./restart-workflow";
export type { RestartWorkflowInput, RestartWorkflowResult } from "./restart-workflow";
export { skipTask, SkipTaskInputSchema } from "./skip-task";
export type { SkipTaskInput, SkipTaskResult } from "./skip-task";
export { completeExternalTask, CompleteExternalTaskInputSchema } from "./complete-external-task";
export type { CompleteExternalTaskInput, CompleteExternalTaskResult } from "./complete-external-task";
export { updateWorkflowVariables, UpdateWorkflowVariablesInputSchema } from "./update-workflow-variables";
export type { UpdateWorkflowVariablesInput, UpdateWorkflowVariablesResult } from "./update-workflow-variables";
