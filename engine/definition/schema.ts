import { z } from "zod";
import { MAX_NAME_LENGTH, MAX_NOTES, MAX_NOTE_TEXT_LENGTH, MAX_PINS, MAX_REF_LENGTH, NOTE_SIZE_LIMITS } from "./limits";
import { TaskPolicySchema } from "./task-policy";
import { LlmChatCompleteSchema, LlmGenerateEmbeddingsSchema, LlmIndexTextSchema, LlmSearchIndexSchema, LlmTextCompleteSchema } from "./llm-schema";
import { AgentConfigSchema } from "./agent-schema";
import { MAX_WAIT_TEXT_LENGTH, containsExpression, isWaitUntil, parseWaitDuration } from "./wait-duration";

/**
 * The graph form of a workflow definition — what the canvas edits, what is
 * stored, what compiles to a blueprint. Nodes carry their type-specific
 * configuration flat beside the common fields, the way Conductor's
 * WorkflowTask does, so a node maps to a React Flow node one to one (`ref` ↔
 * `id`, `parent` ↔ `parentId`, the rest ↔ `data`).
 *
 * These schemas check *shape* only. Everything that needs the whole graph
 * (refs, edges, cycles, reachability, expressions, mutually exclusive forms)
 * is `validateDefinition`'s job; use it, not `WorkflowDefinitionSchema.parse`,
 * to accept a definition. No schema fills in defaults: a parsed definition is
 * exactly what was written, and defaults live in `WORKFLOW_DEFAULTS`,
 * `TASK_POLICY_DEFAULTS` and the `default` metadata the inspector shows.
 */

/** What a node ref must look like: an identifier that may also contain `-`. */
export const REF_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Refs an expression root reserves: `${workflow.input.x}` must never mean a node. */
export const RESERVED_REFS: ReadonlySet<string> = new Set(["workflow"]);

/** The handle every SWITCH has besides its cases; taken when no case matches. */
export const DEFAULT_CASE = "default";

// Conductor forbids ':' in names; control characters and outer whitespace are
// never intended and make names that look equal compare unequal.
const NAME_PATTERN = /^(?=\S)[^:\p{Cc}]*(?<=\S)$/u;

const int = (min = 0) => z.number().int().min(min);

/** A node ref: unique within its definition, referenced by edges and by `${ref.output…}` expressions. */
export const RefSchema = z
  .string()
  .min(1)
  .max(MAX_REF_LENGTH)
  .regex(REF_PATTERN, { error: "A ref starts with a letter or _ and continues with letters, digits, _ or -" });

/** A workflow, task-definition or queue name (Conductor's rule: no `:`). */
export const NameSchema = z
  .string()
  .min(1)
  .max(MAX_NAME_LENGTH)
  .regex(NAME_PATTERN, { error: "A name has no ':', no control characters and no leading or trailing spaces" });

/** A SWITCH case label: the value the SWITCH's expression must produce for the case's edges to be taken. */
export const CaseSchema = z.string().min(1).max(MAX_NAME_LENGTH);

/** A key of the node's `input` that another config field points at. */
const InputKeySchema = z.string().min(1).max(MAX_NAME_LENGTH);

/** A string holding at least one `${…}` expression, resolved when the task is scheduled. */
const ExpressionTextSchema = z.string().refine(containsExpression, { error: "Expected a ${…} expression" });

/** A JSON object whose values may hold `${…}` expressions. */
const ExpressionMapSchema = z.record(z.string(), z.unknown());

/** Canvas coordinates. */
export const PositionSchema = z.strictObject({ x: z.number(), y: z.number() }).meta({ title: "Position" });

/** A canvas position. For a node inside a DO_WHILE it is relative to the container, as React Flow keeps it. */
export type Position = z.infer<typeof PositionSchema>;

/** Every node type, in palette order. The names are Conductor's task types. */
export const NODE_TYPE_NAMES = [
  "SIMPLE",
  "HTTP",
  "HTTP_POLL",
  "JDBC",
  "LIST_MCP_TOOLS",
  "CALL_MCP_TOOL",
  "LLM_CHAT_COMPLETE",
  "LLM_TEXT_COMPLETE",
  "LLM_GENERATE_EMBEDDINGS",
  "LLM_INDEX_TEXT",
  "LLM_SEARCH_INDEX",
  "AGENT",
  "INLINE",
  "JSON_JQ_TRANSFORM",
  "SET_VARIABLE",
  "EVENT",
  "SWITCH",
  "JOIN",
  "EXCLUSIVE_JOIN",
  "FORK_JOIN_DYNAMIC",
  "DO_WHILE",
  "DYNAMIC",
  "WAIT",
  "HUMAN",
  "SUB_WORKFLOW",
  "START_WORKFLOW",
  "TERMINATE",
  "NOOP",
] as const;

/** A node type name. */
export type NodeType = (typeof NODE_TYPE_NAMES)[number];

const NODE_TYPE_SET: ReadonlySet<string> = new Set(NODE_TYPE_NAMES);

/** True for a string that names a node type. */
export function isNodeType(value: unknown): value is NodeType {
  return typeof value === "string" && NODE_TYPE_SET.has(value);
}

/** Fields every node has. */
const nodeBase = {
  ref: RefSchema.meta({ title: "Ref", description: "Unique within the workflow; other nodes read this node's output as ${ref.output…}." }),
  name: NameSchema.optional().meta({
    title: "Task definition",
    description: "The task definition this node runs as: its policy defaults, and for SIMPLE the queue workers poll.",
  }),
  label: z.string().optional().meta({ title: "Label", description: "Shown on the canvas instead of the ref." }),
  description: z.string().optional().meta({ title: "Description" }),
  position: PositionSchema,
  parent: RefSchema.optional().meta({ title: "Container", description: "The ref of the DO_WHILE whose body this node is in." }),
  input: ExpressionMapSchema.optional().meta({
    title: "Input",
    description: "The task's input (Conductor's inputParameters). Values may hold ${workflow.input.x}, ${ref.output.path} and other expressions.",
  }),
  policy: TaskPolicySchema.optional().meta(TaskPolicySchema.meta() ?? {}),
  optional: z
    .boolean()
    .optional()
    .meta({ title: "Optional", description: "When the task fails after its retries, the workflow carries on (as COMPLETED_WITH_ERRORS) instead of failing.", default: false }),
};

const node = <T extends NodeType, S extends z.core.$ZodLooseShape>(type: T, shape: S, title: string, description: string) =>
  z.strictObject({ ...nodeBase, type: z.literal(type) }).extend(shape).meta({ title, description });

/** HTTP methods an HTTP node may use (or an expression producing one). */
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"] as const;

/** An HTTP node's request (Conductor's `inputParameters.http_request`). Every value may hold expressions. */
export const HttpRequestSchema = z
  .strictObject({
    uri: z.string().min(1).meta({ title: "URI", description: "Absolute URL; may hold expressions." }),
    method: z
      .union([z.enum(HTTP_METHODS), ExpressionTextSchema])
      .optional()
      .meta({ title: "Method", default: "GET" }),
    headers: ExpressionMapSchema.optional().meta({ title: "Headers" }),
    body: z.unknown().optional().meta({ title: "Body", description: "Sent as JSON unless contentType says otherwise." }),
    accept: z.string().optional().meta({ title: "Accept", default: "application/json" }),
    contentType: z.string().optional().meta({ title: "Content type", default: "application/json" }),
    connectionTimeOut: int().optional().meta({ title: "Connect timeout (ms)", default: 100 }),
    readTimeOut: int().optional().meta({ title: "Read timeout (ms)", default: 150 }),
  })
  .meta({ title: "HTTP request" });

/** An HTTP node's request. */
export type HttpRequest = z.infer<typeof HttpRequestSchema>;

/** How an HTTP_POLL node spaces its requests (Conductor's pollingStrategy). */
export const HTTP_POLL_STRATEGIES = ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] as const;

/**
 * An HTTP_POLL node's request: an HTTP request plus when to stop polling, as
 * Conductor keeps them together in `inputParameters.http_request`.
 */
export const HttpPollRequestSchema = HttpRequestSchema.extend({
  terminationCondition: z.string().min(1).meta({
    title: "Stop when",
    description: "JavaScript run after each request with the response as `$.output.response`; polling stops when it is true.",
  }),
  pollingInterval: int(1).optional().meta({ title: "Interval (s)", description: "Seconds between requests (the base of a backoff).", default: 60 }),
  pollingStrategy: z.enum(HTTP_POLL_STRATEGIES).optional().meta({
    title: "Strategy",
    description: "FIXED waits the interval each time; LINEAR_BACKOFF interval × n; EXPONENTIAL_BACKOFF interval × 2ⁿ⁻¹ after the n-th request.",
    default: "FIXED",
  }),
  maxPollCount: int(1).optional().meta({ title: "Max polls", description: "Fails the task when the condition still does not hold after this many requests; no limit when absent." }),
}).meta({ title: "HTTP poll request" });

/** An HTTP_POLL node's request. */
export type HttpPollRequest = z.infer<typeof HttpPollRequestSchema>;

/** A JDBC node's SQL operation (Conductor's JDBC `type`). */
export const JDBC_STATEMENT_TYPES = ["SELECT", "UPDATE"] as const;

/**
 * A JDBC node's statement (Conductor's JDBC inputParameters). The connection
 * is named, never given: its Postgres URL is the namespace secret
 * `JDBC_<NAME>` (see server/system-tasks/jdbc-task.ts).
 */
export const JdbcStatementSchema = z
  .strictObject({
    connectionId: z.string().min(1).max(MAX_NAME_LENGTH).optional().meta({
      title: "Connection",
      description: "The connection's name: its Postgres URL is the namespace secret JDBC_<NAME> (upper case, other characters as _).",
    }),
    integrationName: z.string().min(1).max(MAX_NAME_LENGTH).optional().meta({ title: "Integration", description: "Orkes' name for the connection; used like connectionId." }),
    type: z.union([z.enum(JDBC_STATEMENT_TYPES), ExpressionTextSchema]).meta({ title: "Type", description: "SELECT returns rows; UPDATE (also INSERT, DELETE) returns the count.", default: "SELECT" }),
    statement: z.string().min(1).meta({ title: "Statement", description: "SQL with ? placeholders, bound in order from parameters." }),
    parameters: z.unknown().optional().meta({ title: "Parameters", description: "A list of values for the ? placeholders, or an expression producing one." }),
    expectedUpdateCount: z.union([int(), ExpressionTextSchema]).optional().meta({
      title: "Expected update count",
      description: "UPDATE only: the statement is rolled back and the task fails when it changes a different number of rows.",
    }),
  })
  .meta({ title: "JDBC statement" });

/** A JDBC node's statement. */
export type JdbcStatement = z.infer<typeof JdbcStatementSchema>;

/**
 * Where an MCP node reaches its server (Conductor's LIST_MCP_TOOLS and
 * CALL_MCP_TOOL inputParameters): a streamable-HTTP endpoint, through the
 * same network guard as HTTP (server/ai/mcp-client.ts). Header values may
 * read `${workflow.secrets.NAME}`.
 */
const mcpServerShape = {
  mcpServer: z.string().min(1).meta({ title: "MCP server", description: "The server's streamable-HTTP endpoint URL, e.g. https://tools.example.com/mcp; may hold expressions." }),
  headers: ExpressionMapSchema.optional().meta({ title: "Headers", description: "Sent with every request to the server, e.g. Authorization: Bearer ${workflow.secrets.MCP_TOKEN}." }),
};

/** A LIST_MCP_TOOLS node's server. */
export const McpListToolsSchema = z.strictObject(mcpServerShape).meta({ title: "MCP server" });

/** A CALL_MCP_TOOL node's server, tool and arguments. */
export const McpCallToolSchema = z
  .strictObject({
    ...mcpServerShape,
    method: z.string().min(1).meta({ title: "Tool", description: "The name of the tool to call (Conductor's `method`); may be an expression." }),
    arguments: z.unknown().optional().meta({ title: "Arguments", description: "An object matching the tool's input schema, or an expression producing one." }),
  })
  .meta({ title: "MCP tool call" });

/** A LIST_MCP_TOOLS node's server. */
export type McpListTools = z.infer<typeof McpListToolsSchema>;
/** A CALL_MCP_TOOL node's call. */
export type McpCallTool = z.infer<typeof McpCallToolSchema>;

const ScriptEvaluatorSchema = z.enum(["javascript", "graaljs"]);

/** A `duration` text ("10s", "1h 30m") or an expression. */
const DurationTextSchema = z
  .string()
  .max(MAX_WAIT_TEXT_LENGTH)
  .refine((s) => containsExpression(s) || parseWaitDuration(s) !== null, {
    error: 'Expected a duration such as "30s", "5m", "1h 30m" or "2d", or an expression',
  });

/** Zod schema of {@link SimpleNode}. */
export const SimpleNodeSchema = node(
  "SIMPLE",
  { name: NameSchema.meta({ title: "Task type", description: "The queue remote workers poll for this task." }) },
  "Worker task",
  "Runs on a remote worker that polls the task type named by `name`.",
);

/** Zod schema of {@link HttpNode}. */
export const HttpNodeSchema = node("HTTP", { httpRequest: HttpRequestSchema }, "HTTP", "Calls an HTTP endpoint; the response becomes the output.");

/** Zod schema of {@link HttpPollNode}. */
export const HttpPollNodeSchema = node(
  "HTTP_POLL",
  { httpRequest: HttpPollRequestSchema },
  "HTTP poll",
  "Calls an HTTP endpoint again and again, spaced by its polling strategy, until the termination condition holds; the last response becomes the output.",
);

/** Zod schema of {@link JdbcNode}. */
export const JdbcNodeSchema = node("JDBC", { jdbc: JdbcStatementSchema }, "JDBC", "Runs one SQL statement against a configured Postgres connection; rows or the update count become the output.");

/** Zod schema of {@link ListMcpToolsNode}. */
export const ListMcpToolsNodeSchema = node("LIST_MCP_TOOLS", { mcp: McpListToolsSchema }, "List MCP tools", "Asks an MCP server which tools it offers; the list (name, description, input schema) becomes the output.");

/** Zod schema of {@link CallMcpToolNode}. */
export const CallMcpToolNodeSchema = node("CALL_MCP_TOOL", { mcp: McpCallToolSchema }, "Call MCP tool", "Calls one tool on an MCP server with arguments; the tool's result content becomes the output.");

/** Zod schemas of the LLM and retrieval nodes (llm-schema.ts holds their fields). */
export const LlmChatCompleteNodeSchema = node("LLM_CHAT_COMPLETE", { llm: LlmChatCompleteSchema }, "Chat completion", "Sends messages to a model of a configured AI provider; the answer (parsed when JSON) becomes the output's result.");
export const LlmTextCompleteNodeSchema = node("LLM_TEXT_COMPLETE", { llm: LlmTextCompleteSchema }, "Text completion", "Sends one prompt to a model of a configured AI provider; the answer becomes the output's result.");
export const LlmGenerateEmbeddingsNodeSchema = node("LLM_GENERATE_EMBEDDINGS", { llm: LlmGenerateEmbeddingsSchema }, "Embeddings", "Turns text into an embedding vector with a configured AI provider.");
export const LlmIndexTextNodeSchema = node("LLM_INDEX_TEXT", { llm: LlmIndexTextSchema }, "Index text", "Chunks a document, embeds each chunk and stores it in a named vector index.");
export const LlmSearchIndexNodeSchema = node("LLM_SEARCH_INDEX", { llm: LlmSearchIndexSchema }, "Search index", "Finds the chunks of a vector index closest to a query, top k, optionally filtered by metadata.");

/** Zod schema of {@link AgentNode} (agent-schema.ts holds its fields). */
export const AgentNodeSchema = node(
  "AGENT",
  { agent: AgentConfigSchema },
  "Agent",
  "A model with instructions and tools: it calls tools (other node kinds) in turns until it answers; its answer, turns and token usage become the output.",
);

/** Zod schema of {@link InlineNode}. */
export const InlineNodeSchema = node(
  "INLINE",
  {
    evaluatorType: ScriptEvaluatorSchema.meta({ title: "Evaluator", default: "graaljs" }),
    expression: z.string().min(1).meta({ title: "Script", description: "JavaScript run in a sandbox; reads the resolved input as `$`; its value is `output.result`." }),
  },
  "Inline script",
  "Computes a value with a sandboxed JavaScript expression.",
);

/** Zod schema of {@link JsonJqTransformNode}. */
export const JsonJqTransformNodeSchema = node(
  "JSON_JQ_TRANSFORM",
  { queryExpression: z.string().min(1).meta({ title: "jq query", description: "Applied to the resolved input; results become `output.result` (and `resultList`)." }) },
  "jq transform",
  "Reshapes JSON with a jq query.",
);

/** Zod schema of {@link SetVariableNode}. */
export const SetVariableNodeSchema = node("SET_VARIABLE", {}, "Set variables", "Sets workflow variables from its input: each input key becomes ${workflow.variables.key}.");

/** Zod schema of {@link EventNode}. */
export const EventNodeSchema = node(
  "EVENT",
  { sink: z.string().min(1).meta({ title: "Sink", description: "Where the event goes, e.g. `conductor:queue_name`." }) },
  "Publish event",
  "Publishes its input as an event to a sink and completes.",
);

/** Zod schema of {@link SwitchNode}. */
export const SwitchNodeSchema = node(
  "SWITCH",
  {
    evaluatorType: z.enum(["value-param", "javascript", "graaljs"]).meta({
      title: "Evaluator",
      description: "value-param: `expression` names an input key whose value picks the case. javascript/graaljs: `expression` is a script whose value picks it.",
      default: "value-param",
    }),
    expression: z.string().min(1).meta({ title: "Expression" }),
    cases: z.array(CaseSchema).meta({
      title: "Cases",
      description: "One output handle per case, plus the implicit `default` taken when none matches. An unconnected handle ends that path.",
    }),
  },
  "Switch",
  "Takes the edges of the matching case (or default); the others are marked not taken.",
);

/** Zod schema of {@link JoinNode}. */
export const JoinNodeSchema = node(
  "JOIN",
  {
    joinOn: z.array(z.string().min(1)).optional().meta({
      title: "Join on",
      description: "Refs this join reports (Conductor's joinOn). It waits on its incoming edges; every ref listed must finish before it.",
    }),
  },
  "Join",
  "Waits for its incoming branches and merges their outputs. Any node with several incoming edges already joins; JOIN makes it explicit.",
);

/** Zod schema of {@link ExclusiveJoinNode}. */
export const ExclusiveJoinNodeSchema = node(
  "EXCLUSIVE_JOIN",
  {
    joinOn: z.array(z.string().min(1)).optional().meta({ title: "Join on", description: "Refs whose output, whichever ran, becomes this node's output." }),
    defaultExclusiveJoinTask: z.array(z.string().min(1)).optional().meta({ title: "Default refs", description: "Refs used when none of joinOn ran." }),
  },
  "Exclusive join",
  "Merges the branches of a SWITCH: its output is the output of the branch that ran.",
);

/** Zod schema of {@link ForkJoinDynamicNode}. */
export const ForkJoinDynamicNodeSchema = node(
  "FORK_JOIN_DYNAMIC",
  {
    dynamicForkTasksParam: InputKeySchema.optional().meta({
      title: "Tasks input key",
      description: "Conductor form: the input key holding the list of tasks to fork.",
    }),
    dynamicForkTasksInputParamName: InputKeySchema.optional().meta({
      title: "Task inputs input key",
      description: "Conductor form: the input key holding a map from each forked task's ref to its input.",
    }),
    forkTaskName: NameSchema.optional().meta({ title: "Task", description: "Items form: the task type (or sub-workflow name) every instance runs." }),
    forkTaskType: z.enum(["SIMPLE", "SUB_WORKFLOW"]).optional().meta({ title: "Instance type", default: "SIMPLE" }),
    forkTaskVersion: int(1).optional().meta({ title: "Sub-workflow version", description: "Items form with SUB_WORKFLOW instances; latest when absent." }),
    items: z.unknown().optional().meta({ title: "Items", description: "Items form: an array, or an expression producing one; one instance per element, the element as its input." }),
  },
  "Dynamic fork",
  "Runs N instances in parallel, N known only at run time, and completes when all have finished: no JOIN is needed after it.",
);

/** Zod schema of {@link DoWhileNode}. */
export const DoWhileNodeSchema = node(
  "DO_WHILE",
  {
    loopCondition: z.string().min(1).optional().meta({
      title: "Loop condition",
      description: "Condition form: a script evaluated after each iteration; the loop repeats while it is true.",
    }),
    evaluatorType: ScriptEvaluatorSchema.optional().meta({ title: "Evaluator", default: "graaljs" }),
    items: z.unknown().optional().meta({ title: "Items", description: "Items form: an array, or an expression producing one; one iteration per element." }),
    keepLastN: int(1).optional().meta({ title: "Keep last N", description: "Keep the task rows of only the last N iterations; all when absent." }),
  },
  "Loop",
  "A container: its children are the body, run once per iteration. The iteration number is part of each body task's identity.",
);

/** Zod schema of {@link DynamicNode}. */
export const DynamicNodeSchema = node(
  "DYNAMIC",
  { dynamicTaskNameParam: InputKeySchema.meta({ title: "Task name input key", description: "The input key whose value names the task to run." }) },
  "Dynamic task",
  "Runs a task whose type is chosen at run time from its input.",
);

/** Zod schema of {@link WaitNode}. */
export const WaitNodeSchema = node(
  "WAIT",
  {
    duration: DurationTextSchema.optional().meta({ title: "Duration", description: 'Wait this long, e.g. "30s", "5m", "1h 30m".' }),
    until: z
      .string()
      .max(MAX_WAIT_TEXT_LENGTH)
      .refine((s) => containsExpression(s) || isWaitUntil(s), { error: 'Expected a timestamp such as "2030-01-31T09:00:00Z" or "2030-01-31 09:00 UTC", or an expression' })
      .optional()
      .meta({ title: "Until", description: "Wait until this time." }),
    signal: z.literal(true).optional().meta({ title: "External signal", description: "Wait until the task is completed through the API." }),
  },
  "Wait",
  "Pauses this path for a duration, until a time, or until an external signal completes it.",
);

/** A stored form: a FormTemplates row by name, its latest version when the task opens unless `version` pins one. */
export const HumanFormTemplateRefSchema = z
  .strictObject({
    name: NameSchema.meta({ title: "Template name" }),
    version: z.int().min(1).optional().meta({ title: "Version", description: "Absent: the latest version when the task opens." }),
  })
  .meta({ title: "Form template" });

/** A HUMAN task's form: a stored template, or an inline JSON Schema (+ UI schema). */
export const HumanFormSchema = z
  .strictObject({
    template: HumanFormTemplateRefSchema.optional().meta(HumanFormTemplateRefSchema.meta() ?? {}),
    schema: z.record(z.string(), z.unknown()).optional().meta({ title: "JSON Schema" }),
    uiSchema: z.record(z.string(), z.unknown()).optional().meta({ title: "UI schema" }),
  })
  .meta({ title: "Form" });

/**
 * Who a human task is for: "user:<email>", "group:<group name>",
 * "role:<viewer|operator|editor|admin>" or "anyone" — or text holding `${…}`
 * that resolves to one of those when the task opens.
 */
export const HumanAssigneeSchema = z
  .string()
  .min(1)
  .max(400)
  .refine((s) => containsExpression(s) || HUMAN_ASSIGNEE_PATTERN.test(s), {
    error: 'Expected "user:<email>", "group:<name>", "role:<viewer|operator|editor|admin>", "anyone", or an expression',
  });

/** The literal assignee forms (an expression is checked once it is resolved, when the task opens). */
export const HUMAN_ASSIGNEE_PATTERN = /^(?:anyone|user:\S.*|group:\S.*|role:(?:viewer|operator|editor|admin))$/;

/** One step of a HUMAN task's escalation chain, fired when the deadline before it passes. */
export const HumanEscalationStepSchema = z
  .discriminatedUnion("action", [
    z.strictObject({
      action: z.literal("reassign"),
      assignee: HumanAssigneeSchema.meta({ title: "New assignee" }),
      dueIn: DurationTextSchema.optional().meta({ title: "New deadline", description: "From the reassignment; none: no further deadline." }),
    }),
    z.strictObject({ action: z.literal("timeout") }),
    z.strictObject({
      action: z.literal("complete"),
      outcome: CaseSchema.meta({ title: "Default outcome" }),
      data: z.record(z.string(), z.unknown()).optional().meta({ title: "Form data" }),
    }),
  ])
  .meta({ title: "Escalation step" });
export type HumanEscalationStep = z.infer<typeof HumanEscalationStepSchema>;

/** Zod schema of {@link HumanNode}. */
export const HumanNodeSchema = node(
  "HUMAN",
  {
    title: z.string().min(1).max(400).optional().meta({ title: "Inbox title", description: "May hold ${…}; default: the label, then the ref." }),
    assignee: HumanAssigneeSchema.optional().meta({ title: "Assignee", description: "Who the task is for: a user, a group, a role, anyone (the default), or an expression producing one." }),
    approvals: z.int().min(1).max(100).optional().meta({ title: "Approvals", description: "Distinct people who must pick the approving (first) outcome.", default: 1 }),
    allowSelfApproval: z.boolean().optional().meta({ title: "Allow self-approval", description: "Off: the person who started the run may never submit it.", default: true }),
    form: HumanFormSchema.optional().meta(HumanFormSchema.meta() ?? {}),
    outcomes: z.array(CaseSchema).max(20).optional().meta({
      title: "Outcomes",
      description: "Buttons the assignee picks from; the choice is `output.outcome` (route on it with a SWITCH). The first is the approving one.",
    }),
    dueIn: DurationTextSchema.optional().meta({ title: "Due in", description: "How long the assignee has, e.g. \"2d\"." }),
    escalation: z.array(HumanEscalationStepSchema).max(20).optional().meta({
      title: "Escalation",
      description: "Fired in order: the first step at the due time, each next one at the deadline the step before set.",
    }),
  },
  "Human task",
  "Waits for a person to fill in a form in their inbox.",
);

/** Zod schema of {@link SubWorkflowNode}. */
export const SubWorkflowNodeSchema = node(
  "SUB_WORKFLOW",
  {
    subWorkflowParam: z
      .strictObject({
        name: NameSchema.meta({ title: "Workflow", description: "A registered workflow's name, or an expression producing one." }),
        version: z.union([int(1), ExpressionTextSchema]).optional().meta({ title: "Version", description: "Latest when absent; may be an expression." }),
      })
      .optional()
      .meta({ title: "Sub-workflow" }),
    get workflowDefinition() {
      return WorkflowDefinitionSchema.optional();
    },
  },
  "Sub-workflow",
  "Runs another workflow — registered, or defined inline — and waits for it; its output becomes this node's output.",
);

/** Zod schema of {@link StartWorkflowNode}. */
export const StartWorkflowNodeSchema = node(
  "START_WORKFLOW",
  {
    startWorkflow: z
      .strictObject({
        name: NameSchema.meta({ title: "Workflow", description: "A registered workflow's name, or an expression producing one." }),
        version: z.union([int(1), ExpressionTextSchema]).optional().meta({ title: "Version", description: "Latest when absent; may be an expression." }),
        input: ExpressionMapSchema.optional().meta({ title: "Input" }),
        correlationId: z.string().optional().meta({ title: "Correlation id" }),
        priority: z
          .union([int(0).max(99), ExpressionTextSchema])
          .optional()
          .meta({ title: "Priority", description: "0 to 99, or an expression producing one; this run's priority when absent." }),
        idempotencyKey: z.string().min(1).max(255).optional().meta({ title: "Idempotency key", description: "Starts one run per key; may hold expressions." }),
        idempotencyStrategy: z
          .union([z.enum(["RETURN_EXISTING", "FAIL", "FAIL_ON_RUNNING"]), ExpressionTextSchema])
          .optional()
          .meta({ title: "When the key is taken", description: "RETURN_EXISTING (the default) completes with the run that holds it; FAIL and FAIL_ON_RUNNING fail the task." }),
      })
      .meta({ title: "Workflow to start" }),
  },
  "Start workflow",
  "Starts another workflow and carries on without waiting for it; the output holds its workflowId.",
);

/** Zod schema of {@link TerminateNode}. */
export const TerminateNodeSchema = node(
  "TERMINATE",
  {
    terminationStatus: z.enum(["COMPLETED", "FAILED", "TERMINATED"]).meta({ title: "Status", default: "COMPLETED" }),
    terminationReason: z.string().optional().meta({ title: "Reason" }),
    workflowOutput: ExpressionMapSchema.optional().meta({ title: "Workflow output", description: "Replaces the workflow's outputParameters." }),
  },
  "Terminate",
  "Ends the whole workflow with a status; tasks still running are canceled.",
);

/** Zod schema of {@link NoopNode}. */
export const NoopNodeSchema = node("NOOP", {}, "No-op", "Does nothing and completes: a merge point or a placeholder.");

/** A node per type, as a discriminated union on `type`. */
export const WorkflowNodeSchema = z.discriminatedUnion("type", [
  SimpleNodeSchema,
  HttpNodeSchema,
  HttpPollNodeSchema,
  JdbcNodeSchema,
  ListMcpToolsNodeSchema,
  CallMcpToolNodeSchema,
  LlmChatCompleteNodeSchema,
  LlmTextCompleteNodeSchema,
  LlmGenerateEmbeddingsNodeSchema,
  LlmIndexTextNodeSchema,
  LlmSearchIndexNodeSchema,
  AgentNodeSchema,
  InlineNodeSchema,
  JsonJqTransformNodeSchema,
  SetVariableNodeSchema,
  EventNodeSchema,
  SwitchNodeSchema,
  JoinNodeSchema,
  ExclusiveJoinNodeSchema,
  ForkJoinDynamicNodeSchema,
  DoWhileNodeSchema,
  DynamicNodeSchema,
  WaitNodeSchema,
  HumanNodeSchema,
  SubWorkflowNodeSchema,
  StartWorkflowNodeSchema,
  TerminateNodeSchema,
  NoopNodeSchema,
]);

/** A task on a remote worker polling the queue `name`. */
export type SimpleNode = z.infer<typeof SimpleNodeSchema>;
/** A system HTTP call. */
export type HttpNode = z.infer<typeof HttpNodeSchema>;
/** An HTTP endpoint polled until a condition holds. */
export type HttpPollNode = z.infer<typeof HttpPollNodeSchema>;
/** A SQL statement against a configured connection. */
export type JdbcNode = z.infer<typeof JdbcNodeSchema>;
/** Lists an MCP server's tools. */
export type ListMcpToolsNode = z.infer<typeof ListMcpToolsNodeSchema>;
/** Calls one tool of an MCP server. */
export type CallMcpToolNode = z.infer<typeof CallMcpToolNodeSchema>;
/** A chat completion. */
export type LlmChatCompleteNode = z.infer<typeof LlmChatCompleteNodeSchema>;
/** A text completion. */
export type LlmTextCompleteNode = z.infer<typeof LlmTextCompleteNodeSchema>;
/** Embeddings of text. */
export type LlmGenerateEmbeddingsNode = z.infer<typeof LlmGenerateEmbeddingsNodeSchema>;
/** Text indexed into a vector index. */
export type LlmIndexTextNode = z.infer<typeof LlmIndexTextNodeSchema>;
/** A vector index searched. */
export type LlmSearchIndexNode = z.infer<typeof LlmSearchIndexNodeSchema>;
/** An LLM agent with tools. */
export type AgentNode = z.infer<typeof AgentNodeSchema>;
/** A sandboxed JavaScript expression. */
export type InlineNode = z.infer<typeof InlineNodeSchema>;
/** A jq transform. */
export type JsonJqTransformNode = z.infer<typeof JsonJqTransformNodeSchema>;
/** Sets workflow variables from its input. */
export type SetVariableNode = z.infer<typeof SetVariableNodeSchema>;
/** Publishes an event. */
export type EventNode = z.infer<typeof EventNodeSchema>;
/** Routes by case. */
export type SwitchNode = z.infer<typeof SwitchNodeSchema>;
/** Explicit join. */
export type JoinNode = z.infer<typeof JoinNodeSchema>;
/** Merge of exclusive (SWITCH) branches. */
export type ExclusiveJoinNode = z.infer<typeof ExclusiveJoinNodeSchema>;
/** N instances at run time. */
export type ForkJoinDynamicNode = z.infer<typeof ForkJoinDynamicNodeSchema>;
/** Loop container. */
export type DoWhileNode = z.infer<typeof DoWhileNodeSchema>;
/** Task type chosen at run time. */
export type DynamicNode = z.infer<typeof DynamicNodeSchema>;
/** Timer or external signal. */
export type WaitNode = z.infer<typeof WaitNodeSchema>;
/** A form for a person. */
export type HumanNode = z.infer<typeof HumanNodeSchema>;
/** A child workflow, waited for. */
export type SubWorkflowNode = z.infer<typeof SubWorkflowNodeSchema>;
/** A workflow started and not waited for. */
export type StartWorkflowNode = z.infer<typeof StartWorkflowNodeSchema>;
/** Ends the workflow. */
export type TerminateNode = z.infer<typeof TerminateNodeSchema>;
/** Does nothing. */
export type NoopNode = z.infer<typeof NoopNodeSchema>;

/**
 * A node of the graph, discriminated on `type`. (Not called `Node`: that name
 * is the DOM's global and React Flow's node type, both in scope in the editor.)
 */
export type WorkflowNode = z.infer<typeof WorkflowNodeSchema>;

/** The node variant for one type, e.g. `NodeOfType<"SWITCH">`. */
export type NodeOfType<T extends NodeType> = Extract<WorkflowNode, { type: T }>;

/** Narrows a node by type, e.g. `if (isNodeOfType(node, "SWITCH")) node.cases`. */
export function isNodeOfType<T extends NodeType>(node: WorkflowNode, type: T): node is NodeOfType<T> {
  return node.type === type;
}

/** Per-type node schemas, for the inspector and the validator. */
export const NODE_SCHEMAS: { readonly [T in NodeType]: z.ZodType<NodeOfType<T>> } = {
  SIMPLE: SimpleNodeSchema,
  HTTP: HttpNodeSchema,
  HTTP_POLL: HttpPollNodeSchema,
  JDBC: JdbcNodeSchema,
  LIST_MCP_TOOLS: ListMcpToolsNodeSchema,
  CALL_MCP_TOOL: CallMcpToolNodeSchema,
  LLM_CHAT_COMPLETE: LlmChatCompleteNodeSchema,
  LLM_TEXT_COMPLETE: LlmTextCompleteNodeSchema,
  LLM_GENERATE_EMBEDDINGS: LlmGenerateEmbeddingsNodeSchema,
  LLM_INDEX_TEXT: LlmIndexTextNodeSchema,
  LLM_SEARCH_INDEX: LlmSearchIndexNodeSchema,
  AGENT: AgentNodeSchema,
  INLINE: InlineNodeSchema,
  JSON_JQ_TRANSFORM: JsonJqTransformNodeSchema,
  SET_VARIABLE: SetVariableNodeSchema,
  EVENT: EventNodeSchema,
  SWITCH: SwitchNodeSchema,
  JOIN: JoinNodeSchema,
  EXCLUSIVE_JOIN: ExclusiveJoinNodeSchema,
  FORK_JOIN_DYNAMIC: ForkJoinDynamicNodeSchema,
  DO_WHILE: DoWhileNodeSchema,
  DYNAMIC: DynamicNodeSchema,
  WAIT: WaitNodeSchema,
  HUMAN: HumanNodeSchema,
  SUB_WORKFLOW: SubWorkflowNodeSchema,
  START_WORKFLOW: StartWorkflowNodeSchema,
  TERMINATE: TerminateNodeSchema,
  NOOP: NoopNodeSchema,
};

/**
 * An edge: `target` may start once `source` has finished (and, leaving a
 * SWITCH, once `case` was the case taken). Edges connect nodes of the same
 * container level only.
 */
export const WorkflowEdgeSchema = z
  .strictObject({
    id: z.string().min(1).max(MAX_NAME_LENGTH).optional().meta({ title: "Id", description: "Unique when present; the editor's edge id." }),
    source: z.string().min(1).meta({ title: "From" }),
    target: z.string().min(1).meta({ title: "To" }),
    case: CaseSchema.optional().meta({
      title: "Case",
      description: "Only on edges leaving a SWITCH (and required there): one of its cases, or `default`.",
    }),
  })
  .meta({ title: "Edge" });

/** An edge of the graph (not `Edge`, which React Flow exports). */
export type WorkflowEdge = z.infer<typeof WorkflowEdgeSchema>;

/** A workflow tag, Conductor's `{key, value}` form. */
export const TagSchema = z.strictObject({ key: z.string().min(1).max(MAX_NAME_LENGTH), value: z.string().max(MAX_NAME_LENGTH) });

/** What a workflow timeout does (Conductor's WorkflowDef `timeoutPolicy`). */
export const WORKFLOW_TIMEOUT_POLICIES = ["TIME_OUT_WF", "ALERT_ONLY"] as const;

/** Colours a sticky note can have; the canvas maps each to a light and a dark tint. */
export const NOTE_COLORS = ["yellow", "blue", "green", "pink", "purple", "gray"] as const;

/** A sticky note's colour. */
export type NoteColor = (typeof NOTE_COLORS)[number];

/**
 * A sticky note on the canvas: markdown text beside the diagram, for the
 * people reading it. The engine never reads notes (compile and decide look at
 * nodes and edges only); they are saved with the definition and travel through
 * Conductor export under `metadata.nodeFlow.notes`.
 */
export const NoteSchema = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .max(MAX_REF_LENGTH)
      .regex(REF_PATTERN, { error: "A note id starts with a letter or _ and continues with letters, digits, _ or -" })
      .meta({ title: "Id", description: "Unique among the definition's notes." }),
    text: z.string().max(MAX_NOTE_TEXT_LENGTH).meta({ title: "Text", description: "Markdown: headings, emphasis, code, lists and http(s) links." }),
    color: z.enum(NOTE_COLORS).optional().meta({ title: "Colour", default: "yellow" }),
    position: PositionSchema,
    width: z.number().min(NOTE_SIZE_LIMITS.minWidth).max(NOTE_SIZE_LIMITS.max).optional().meta({ title: "Width", default: NOTE_SIZE_LIMITS.defaultWidth }),
    height: z.number().min(NOTE_SIZE_LIMITS.minHeight).max(NOTE_SIZE_LIMITS.max).optional().meta({ title: "Height", default: NOTE_SIZE_LIMITS.defaultHeight }),
  })
  .meta({ title: "Note" });

/** A sticky note on the canvas. */
export type WorkflowNote = z.infer<typeof NoteSchema>;

/**
 * Pinned outputs: a node's output fixed by hand or from a past run, keyed by
 * ref. Test data for the editor — a step tested there reads its upstream
 * nodes' outputs from these pins — and never read by the engine: runs,
 * compile and Conductor export leave them out.
 */
export const PinsSchema = z
  .record(RefSchema, z.record(z.string(), z.unknown()))
  .refine((pins) => Object.keys(pins).length <= MAX_PINS, { error: `At most ${MAX_PINS} pinned outputs` })
  .meta({ title: "Pinned outputs", description: "Test data for the editor, keyed by node ref; ignored when the workflow runs." });

/** Zod schema of {@link WorkflowDefinition}. */
export const WorkflowDefinitionSchema = z
  .strictObject({
    schemaVersion: z.literal(1).meta({ title: "Schema version", description: "The graph format's version; 1." }),
    name: NameSchema.meta({ title: "Name" }),
    version: int(1).optional().meta({ title: "Version", description: "Assigned on save: definitions are immutable per (name, version)." }),
    description: z.string().optional().meta({ title: "Description" }),
    nodes: z.array(WorkflowNodeSchema),
    edges: z.array(WorkflowEdgeSchema),
    inputSchema: z.record(z.string(), z.unknown()).optional().meta({ title: "Input schema", description: "JSON Schema the workflow's input must satisfy." }),
    outputParameters: ExpressionMapSchema.optional().meta({ title: "Output", description: "The workflow's output, built with expressions once it completes." }),
    variables: z.record(z.string(), z.unknown()).optional().meta({ title: "Variables", description: "Initial values of ${workflow.variables.x}; SET_VARIABLE changes them." }),
    timeoutSeconds: int().optional().meta({ title: "Timeout (s)", description: "0 means no timeout.", default: 0 }),
    timeoutPolicy: z
      .enum(WORKFLOW_TIMEOUT_POLICIES)
      .optional()
      .meta({ title: "On timeout", description: "TIME_OUT_WF ends the workflow as TIMED_OUT; ALERT_ONLY only records the breach.", default: "ALERT_ONLY" }),
    failureWorkflow: NameSchema.optional().meta({ title: "Failure workflow", description: "Started with the failed workflow's details when this one fails." }),
    restartable: z.boolean().optional().meta({ title: "Restartable", description: "Whether a finished run may be restarted from the beginning.", default: true }),
    ownerEmail: z.email().optional().meta({ title: "Owner email" }),
    tags: z.array(TagSchema).optional().meta({ title: "Tags" }),
    notes: z
      .array(NoteSchema)
      .max(MAX_NOTES)
      .optional()
      .meta({ title: "Notes", description: "Sticky notes on the canvas; ignored when the workflow runs." }),
    pins: PinsSchema.optional(),
  })
  .meta({ title: "Workflow definition" });

/** A workflow definition in graph form: the diagram is the definition. */
export type WorkflowDefinition = z.infer<typeof WorkflowDefinitionSchema>;

/** Workflow-level defaults (Conductor's), applied by whoever runs a definition, never by parsing. */
export const WORKFLOW_DEFAULTS = Object.freeze({
  timeoutSeconds: 0,
  timeoutPolicy: "ALERT_ONLY",
  restartable: true,
} as const satisfies Pick<WorkflowDefinition, "timeoutSeconds" | "timeoutPolicy" | "restartable">);
