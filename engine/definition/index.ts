/**
 * Workflow definitions in graph form: the schema (zod + inferred types), the
 * node-type registry, graph helpers and the validator.
 */
export {
  CaseSchema,
  DEFAULT_CASE,
  DoWhileNodeSchema,
  DynamicNodeSchema,
  EventNodeSchema,
  ExclusiveJoinNodeSchema,
  ForkJoinDynamicNodeSchema,
  HTTP_METHODS,
  HttpNodeSchema,
  HttpRequestSchema,
  HumanFormSchema,
  HumanNodeSchema,
  InlineNodeSchema,
  JoinNodeSchema,
  JsonJqTransformNodeSchema,
  NODE_SCHEMAS,
  NODE_TYPE_NAMES,
  NOTE_COLORS,
  NameSchema,
  NoteSchema,
  PinsSchema,
  NoopNodeSchema,
  PositionSchema,
  REF_PATTERN,
  RESERVED_REFS,
  RefSchema,
  SetVariableNodeSchema,
  SimpleNodeSchema,
  StartWorkflowNodeSchema,
  SubWorkflowNodeSchema,
  SwitchNodeSchema,
  TagSchema,
  TerminateNodeSchema,
  WORKFLOW_DEFAULTS,
  WORKFLOW_TIMEOUT_POLICIES,
  WaitNodeSchema,
  WorkflowDefinitionSchema,
  WorkflowEdgeSchema,
  WorkflowNodeSchema,
  isNodeOfType,
  isNodeType,
} from "./schema";
export { LLM_CONFIG_KEYS, LLM_NODE_TYPES, LLM_REQUIRED_KEYS, isLlmNodeType } from "./llm-schema";
export type { LlmNodeType } from "./llm-schema";
export {
  AGENT_DEFAULT_MAX_TURNS,
  AGENT_MAX_TOOL_CALLS_PER_TURN,
  AGENT_TOOL_KINDS,
  AgentConfigSchema,
  AgentToolSchema,
  agentApprovalRef,
  agentChildRefs,
  agentLlmRef,
  agentToolRef,
  isAgentToolHeaderPath,
  parseAgentChildRef,
} from "./agent-schema";
export type { AgentConfig, AgentTool, AgentToolKind } from "./agent-schema";
export type {
  DoWhileNode,
  DynamicNode,
  EventNode,
  ExclusiveJoinNode,
  ForkJoinDynamicNode,
  HttpNode,
  HttpRequest,
  HumanNode,
  AgentNode,
  InlineNode,
  JoinNode,
  JsonJqTransformNode,
  NodeOfType,
  NodeType,
  NoopNode,
  NoteColor,
  Position,
  SetVariableNode,
  SimpleNode,
  StartWorkflowNode,
  SubWorkflowNode,
  SwitchNode,
  TerminateNode,
  WaitNode,
  WorkflowDefinition,
  WorkflowEdge,
  WorkflowNode,
  WorkflowNote,
} from "./schema";
export { RETRY_LOGICS, TASK_POLICY_DEFAULTS, TASK_TIMEOUT_POLICIES, TaskCacheSchema, TaskPolicySchema, effectiveTaskPolicy } from "./task-policy";
export type { EffectiveTaskPolicy, TaskPolicy } from "./task-policy";
export { COMMON_EXPRESSION_FIELDS, NODE_CATEGORIES, NODE_TYPES, NODE_TYPE_LIST, createNode, fieldValue, isContainerType } from "./node-types";
export type { FieldPath, NodeCategory, NodeConfig, NodeTypeInfo } from "./node-types";
export { DefinitionGraph, buildGraph } from "./graph";
export type { DroppedEdge, DroppedEdgeReason, GraphCycle, GraphEdge, GraphEdgeInput, GraphInput, GraphNodeInput, UpstreamQuery } from "./graph";
export { SYSTEM_QUEUE_NAMES, validateDefinition } from "./validate";
export type { ValidateOptions, ValidationResult } from "./validate";
export { PROBLEM_CODES, WARNING_PROBLEM_CODES, severityOf } from "./problems";
export type { Problem, ProblemCode, ProblemPath, ProblemSeverity } from "./problems";
export { DEFINITION_LIMITS, MAX_NAME_LENGTH, MAX_NOTES, MAX_NOTE_TEXT_LENGTH, MAX_PINS, MAX_REF_LENGTH, NOTE_SIZE_LIMITS } from "./limits";
export type { DefinitionLimits } from "./limits";
export { MAX_WAIT_TEXT_LENGTH, containsExpression, isWaitUntil, parseWaitDuration } from "./wait-duration";
export { DISPATCHED_NODE_TYPES, definitionDispatchReferences, dispatchCandidateStrings, dispatchedFields, isDispatchedField } from "./dispatch-refs";
export type { DefinitionDispatchReference } from "./dispatch-refs";
