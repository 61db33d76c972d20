/**
 * Conductor interop: Conductor's WorkflowDef/WorkflowTask/TaskDef JSON as zod
 * schemas, import (nested → graph, with a tidy layout) and export (graph →
 * nested, where the graph is structured; otherwise a refusal naming the node).
 */
export {
  CONDUCTOR_RETRY_LOGICS,
  CONDUCTOR_TASK_TIMEOUT_POLICIES,
  CONDUCTOR_TASK_TYPES,
  CONDUCTOR_WORKFLOW_TIMEOUT_POLICIES,
  ConductorCacheConfigSchema,
  ConductorSchemaDefSchema,
  ConductorSubWorkflowParamsSchema,
  ConductorTaskDefSchema,
  ConductorWorkflowDefSchema,
  ConductorWorkflowTaskSchema,
  NOTES_METADATA_KEY,
  NodeFlowTaskExtensionSchema,
} from "./conductor-schema";
export type {
  ConductorCacheConfig,
  ConductorSchemaDef,
  ConductorSubWorkflowParams,
  ConductorTaskDef,
  ConductorTaskType,
  ConductorWorkflowDef,
  ConductorWorkflowTask,
  NodeFlowTaskExtension,
} from "./conductor-schema";
export { importConductorWorkflow } from "./import-workflow";
export type { ConductorImportOptions, ConductorImportResult } from "./import-workflow";
export { exportConductorWorkflow } from "./export-workflow";
export type { ConductorExportOptions, ConductorExportResult } from "./export-workflow";
export { CONDUCTOR_PROBLEM_CODES, CONDUCTOR_WARNING_CODES } from "./problems";
export type { ConductorExportProblem, ConductorImportProblem, ConductorImportWarning, ConductorProblemCode, ConductorWarningCode } from "./problems";
export { LAYOUT_DEFAULTS, computeLayout, layoutDefinition } from "./layout";
export type { LayoutOptions, NodeBox } from "./layout";
export { edgeKey, graphStructure, structureDifference } from "./structure";
export type { GraphStructure, StructureNode } from "./structure";
