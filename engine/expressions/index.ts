/**
 * Conductor-compatible expressions: `${…}` parameter mapping with Jayway
 * JSONPath, static analysis of the refs a template reads, and the interface
 * sandboxed scripts are evaluated through.
 */
export { resolveTemplate, resolveTemplateIn, MAX_INTERPOLATED_LENGTH } from "./resolve-template";
export type { ResolveOptions } from "./resolve-template";
export { TASK_ID_SYSTEM_PARAMETER, taskDocument, workflowDocument } from "./expression-context";
export type { ExpressionContext, TaskView, WorkflowView } from "./expression-context";
export { referencedRefs } from "./referenced-refs";
export {
  DISPATCH_NAME_PATTERN,
  DISPATCH_READABLE_WORKFLOW_FIELDS,
  SECRET_MASK,
  analyzeDispatchString,
  classifyDispatchPath,
  dispatchPlaceholder,
  dispatchReferenceText,
} from "./dispatch-references";
export type { DispatchKind, DispatchPathClass, DispatchReference, DispatchStringAnalysis } from "./dispatch-references";
export type { ExpressionProblem, ExpressionProblemCode, ExpressionReferences } from "./referenced-refs";
export { MAX_EXPRESSION_NESTING, parseTemplate } from "./template-parser";
export type { ParsedTemplate, TemplateExpression, TemplatePart, TemplateText } from "./template-parser";
export { MAX_PATH_NESTING, PATH_FUNCTIONS, parseJsonPath } from "./json-path-parser";
export type {
  FilterExpression,
  FilterOperand,
  FilterOperator,
  FunctionSegment,
  JsonPath,
  JsonPathParseResult,
  PathFunctionName,
  PathSegment,
  ScanSegment,
  SelectorSegment,
} from "./json-path-parser";
export { MAX_PATH_STEPS, evaluateJsonPath } from "./json-path-evaluator";
export type { PathDocument, PathEvaluationOptions, PathLookup } from "./json-path-evaluator";
export { doWhileConditionInput, scriptResultToBoolean } from "./script-evaluator";
export type { DoWhileConditionSource, ScriptEvaluationOptions, ScriptEvaluator, ScriptResult } from "./script-evaluator";
