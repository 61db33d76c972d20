import type { z } from "zod";
import type { NodeOfType, NodeType, Position, WorkflowNode } from "./schema";
import { NODE_SCHEMAS, NODE_TYPE_NAMES } from "./schema";

/**
 * The node-type registry: everything the palette, the canvas and the
 * inspector need to know about a node type without switching on it, and what
 * the compiler needs to find expressions.
 */

/** Palette groups. */
export type NodeCategory = "work" | "ai" | "data" | "flow" | "wait" | "workflow";

/** Palette group titles, in palette order. */
export const NODE_CATEGORIES: Readonly<Record<NodeCategory, string>> = Object.freeze({
  work: "Tasks",
  ai: "AI",
  data: "Data",
  flow: "Flow control",
  wait: "Waiting",
  workflow: "Workflows",
});

/** A node's type-specific configuration: the node without its identity and placement. */
export type NodeConfig<T extends NodeType> = Omit<NodeOfType<T>, "ref" | "position" | "parent">;

/** A path from a node to a value, e.g. `["httpRequest"]` or `["policy", "cache", "key"]`. */
export type FieldPath = readonly string[];

/** What the registry knows about one node type. */
export interface NodeTypeInfo<T extends NodeType = NodeType> {
  /** The type name (Conductor's task type). */
  readonly type: T;
  /** Palette and inspector title. */
  readonly label: string;
  /** Icon hint: a lucide icon name. */
  readonly icon: string;
  /** One line for the palette tooltip. */
  readonly description: string;
  /** Palette group. */
  readonly category: NodeCategory;
  /** True when nodes of this type hold other nodes (their `parent` names it): DO_WHILE. */
  readonly isContainer: boolean;
  /** True when edges leaving it carry a `case` (one output handle per case plus `default`): SWITCH. */
  readonly acceptsCaseEdges: boolean;
  /**
   * Fields whose values are resolved as expressions when the task is
   * scheduled, so may read `${ref.output…}`. The compiler records the refs
   * they read; the validator checks those refs are upstream. Scripts (INLINE,
   * SWITCH javascript, DO_WHILE loopCondition) read the resolved input as `$`
   * and are not listed: their data flows through `input`.
   */
  readonly expressionFields: readonly FieldPath[];
  /** The zod schema of this node variant (the inspector builds its form from it). */
  readonly schema: z.ZodType<NodeOfType<T>>;
  /** A fresh, valid configuration for a node dropped from the palette as `ref` (a loop's condition names its own ref). */
  defaultConfig(ref: string): NodeConfig<T>;
}

/** Expression-bearing fields every node type has (see {@link NodeTypeInfo.expressionFields}). */
export const COMMON_EXPRESSION_FIELDS: readonly FieldPath[] = Object.freeze([["input"], ["policy", "inputTemplate"], ["policy", "cache", "key"]]);

type Spec<T extends NodeType> = Omit<NodeTypeInfo<T>, "type" | "schema" | "expressionFields"> & {
  readonly expressionFields?: readonly FieldPath[];
};

const SPECS: { readonly [T in NodeType]: Spec<T> } = {
  SIMPLE: {
    label: "Worker task",
    icon: "cog",
    description: "Runs on a remote worker polling this task type.",
    category: "work",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "SIMPLE", name: "my_task", input: {} }),
  },
  HTTP: {
    label: "HTTP",
    icon: "globe",
    description: "Calls an HTTP endpoint; the response is the output.",
    category: "work",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["httpRequest"]],
    defaultConfig: () => ({ type: "HTTP", httpRequest: { uri: "https://example.com", method: "GET" } }),
  },
  HTTP_POLL: {
    label: "HTTP poll",
    icon: "refresh-cw",
    description: "Calls an HTTP endpoint until a condition on the response holds.",
    category: "work",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["httpRequest"]],
    defaultConfig: () => ({
      type: "HTTP_POLL",
      httpRequest: {
        uri: "https://example.com/jobs/1",
        method: "GET",
        terminationCondition: "$.output.response.body.status === 'DONE'",
        pollingInterval: 60,
        pollingStrategy: "FIXED",
      },
    }),
  },
  JDBC: {
    label: "SQL (JDBC)",
    icon: "database",
    description: "Runs a SQL statement against a configured Postgres connection.",
    category: "work",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["jdbc"]],
    defaultConfig: () => ({ type: "JDBC", jdbc: { connectionId: "main", type: "SELECT", statement: "SELECT 1 AS one", parameters: [] } }),
  },
  LIST_MCP_TOOLS: {
    label: "List MCP tools",
    icon: "plug",
    description: "Asks an MCP server which tools it offers.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["mcp"]],
    defaultConfig: () => ({ type: "LIST_MCP_TOOLS", mcp: { mcpServer: "https://tools.example.com/mcp" } }),
  },
  CALL_MCP_TOOL: {
    label: "Call MCP tool",
    icon: "wrench",
    description: "Calls one tool on an MCP server.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["mcp"]],
    defaultConfig: () => ({ type: "CALL_MCP_TOOL", mcp: { mcpServer: "https://tools.example.com/mcp", method: "my_tool", arguments: {} } }),
  },
  LLM_CHAT_COMPLETE: {
    label: "Chat completion",
    icon: "message-square",
    description: "Asks a model of a configured AI provider, with messages.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["llm"]],
    defaultConfig: () => ({ type: "LLM_CHAT_COMPLETE", llm: { llmProvider: "openai", model: "gpt-4o-mini", messages: [{ role: "user", message: "${workflow.input.question}" }] } }),
  },
  LLM_TEXT_COMPLETE: {
    label: "Text completion",
    icon: "align-left",
    description: "Completes one prompt with a model of a configured AI provider.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["llm"]],
    defaultConfig: () => ({ type: "LLM_TEXT_COMPLETE", llm: { llmProvider: "openai", model: "gpt-4o-mini", prompt: "Summarise: ${workflow.input.text}" } }),
  },
  LLM_GENERATE_EMBEDDINGS: {
    label: "Embeddings",
    icon: "binary",
    description: "Turns text into an embedding vector.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["llm"]],
    defaultConfig: () => ({ type: "LLM_GENERATE_EMBEDDINGS", llm: { llmProvider: "openai", model: "text-embedding-3-small", text: "${workflow.input.text}" } }),
  },
  LLM_INDEX_TEXT: {
    label: "Index text",
    icon: "file-input",
    description: "Chunks, embeds and stores a document in a vector index.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["llm"]],
    defaultConfig: () => ({ type: "LLM_INDEX_TEXT", llm: { index: "docs", embeddingModelProvider: "openai", embeddingModel: "text-embedding-3-small", docId: "${workflow.input.docId}", text: "${workflow.input.text}" } }),
  },
  LLM_SEARCH_INDEX: {
    label: "Search index",
    icon: "search",
    description: "Finds the chunks of a vector index closest to a query.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["llm"]],
    defaultConfig: () => ({ type: "LLM_SEARCH_INDEX", llm: { index: "docs", embeddingModelProvider: "openai", embeddingModel: "text-embedding-3-small", query: "${workflow.input.question}", maxResults: 5 } }),
  },
  AGENT: {
    label: "Agent",
    icon: "bot",
    description: "A model with instructions and tools, run turn by turn until it answers.",
    category: "ai",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["agent"]],
    defaultConfig: () => ({
      type: "AGENT",
      agent: { llmProvider: "openai", model: "gpt-4o-mini", instructions: "You are a helpful assistant.", prompt: "${workflow.input.question}", maxTurns: 10, tools: [] },
    }),
  },
  INLINE: {
    label: "Inline script",
    icon: "code",
    description: "Computes a value with sandboxed JavaScript.",
    category: "data",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({
      type: "INLINE",
      evaluatorType: "graaljs",
      expression: "(function () { return $.value; })();",
      input: { value: "${workflow.input.value}" },
    }),
  },
  JSON_JQ_TRANSFORM: {
    label: "jq transform",
    icon: "braces",
    description: "Reshapes JSON with a jq query.",
    category: "data",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "JSON_JQ_TRANSFORM", queryExpression: ".", input: {} }),
  },
  SET_VARIABLE: {
    label: "Set variables",
    icon: "variable",
    description: "Sets workflow variables from its input.",
    category: "data",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "SET_VARIABLE", input: {} }),
  },
  EVENT: {
    label: "Publish event",
    icon: "radio-tower",
    description: "Publishes its input to an event sink.",
    category: "work",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "EVENT", sink: "conductor", input: {} }),
  },
  SWITCH: {
    label: "Switch",
    icon: "git-branch",
    description: "Takes one branch by case; default when none matches.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: true,
    defaultConfig: () => ({
      type: "SWITCH",
      evaluatorType: "value-param",
      expression: "switchCaseValue",
      cases: [],
      input: { switchCaseValue: "${workflow.input.value}" },
    }),
  },
  JOIN: {
    label: "Join",
    icon: "merge",
    description: "Waits for all incoming branches.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "JOIN" }),
  },
  EXCLUSIVE_JOIN: {
    label: "Exclusive join",
    icon: "git-merge",
    description: "Merges SWITCH branches; outputs the one that ran.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "EXCLUSIVE_JOIN" }),
  },
  FORK_JOIN_DYNAMIC: {
    label: "Dynamic fork",
    icon: "split",
    description: "Runs one instance per item, in parallel, and waits for all.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["items"]],
    defaultConfig: () => ({ type: "FORK_JOIN_DYNAMIC", forkTaskName: "my_task", items: "${workflow.input.items}" }),
  },
  DO_WHILE: {
    label: "Loop",
    icon: "repeat",
    description: "Repeats its body while a condition holds, or once per item.",
    category: "flow",
    isContainer: true,
    acceptsCaseEdges: false,
    expressionFields: [["items"]],
    // Conductor's condition sees the loop's output (with `iteration`, from 1) under its ref.
    defaultConfig: (ref) => ({
      type: "DO_WHILE",
      evaluatorType: "graaljs",
      loopCondition: `$[${JSON.stringify(ref)}].iteration < $.times`,
      input: { times: 3 },
    }),
  },
  DYNAMIC: {
    label: "Dynamic task",
    icon: "shuffle",
    description: "Runs a task type chosen at run time.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "DYNAMIC", dynamicTaskNameParam: "taskToExecute", input: { taskToExecute: "${workflow.input.taskName}" } }),
  },
  WAIT: {
    label: "Wait",
    icon: "clock",
    description: "Waits for a duration, until a time, or for a signal.",
    category: "wait",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["duration"], ["until"]],
    defaultConfig: () => ({ type: "WAIT", duration: "1m" }),
  },
  HUMAN: {
    label: "Human task",
    icon: "user-check",
    description: "Waits for a person to complete a form.",
    category: "wait",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["title"], ["assignee"], ["dueIn"], ["escalation"]],
    defaultConfig: () => ({ type: "HUMAN", outcomes: ["approve", "reject"] }),
  },
  SUB_WORKFLOW: {
    label: "Sub-workflow",
    icon: "workflow",
    description: "Runs another workflow and waits for it.",
    category: "workflow",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["subWorkflowParam"]],
    defaultConfig: () => ({ type: "SUB_WORKFLOW", subWorkflowParam: { name: "my_workflow" }, input: {} }),
  },
  START_WORKFLOW: {
    label: "Start workflow",
    icon: "rocket",
    description: "Starts another workflow without waiting.",
    category: "workflow",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["startWorkflow"]],
    defaultConfig: () => ({ type: "START_WORKFLOW", startWorkflow: { name: "my_workflow", input: {} } }),
  },
  TERMINATE: {
    label: "Terminate",
    icon: "octagon-x",
    description: "Ends the workflow with a status.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    expressionFields: [["terminationReason"], ["workflowOutput"]],
    defaultConfig: () => ({ type: "TERMINATE", terminationStatus: "COMPLETED" }),
  },
  NOOP: {
    label: "No-op",
    icon: "circle-dashed",
    description: "Does nothing: a merge point or placeholder.",
    category: "flow",
    isContainer: false,
    acceptsCaseEdges: false,
    defaultConfig: () => ({ type: "NOOP" }),
  },
};

function info<T extends NodeType>(type: T): NodeTypeInfo<T> {
  const spec = SPECS[type] as Spec<T>;
  return Object.freeze({
    ...spec,
    type,
    schema: NODE_SCHEMAS[type],
    expressionFields: Object.freeze([...COMMON_EXPRESSION_FIELDS, ...(spec.expressionFields ?? [])]),
  });
}

/** The registry, keyed by type. */
export const NODE_TYPES: { readonly [T in NodeType]: NodeTypeInfo<T> } = Object.freeze(
  Object.fromEntries(NODE_TYPE_NAMES.map((t) => [t, info(t)])) as { [T in NodeType]: NodeTypeInfo<T> },
);

/** The registry in palette order. */
export const NODE_TYPE_LIST: readonly NodeTypeInfo[] = Object.freeze(NODE_TYPE_NAMES.map((t) => NODE_TYPES[t] as NodeTypeInfo));

/** True for types whose nodes hold a body (DO_WHILE). Accepts any string so graph code can ask about unvalidated input. */
export function isContainerType(type: string): boolean {
  return (NODE_TYPES as Readonly<Record<string, NodeTypeInfo | undefined>>)[type]?.isContainer === true;
}

/** A new node of `type` with its default configuration, as the palette drops it. */
export function createNode<T extends NodeType>(type: T, ref: string, position: Position, parent?: string): NodeOfType<T> {
  const config = NODE_TYPES[type].defaultConfig(ref);
  const node = { ...config, ref, position } as unknown as NodeOfType<T>;
  if (parent !== undefined) (node as WorkflowNode).parent = parent;
  return node;
}

/** Reads the value at `path` inside a node (own properties only), or undefined. */
export function fieldValue(node: WorkflowNode, path: FieldPath): unknown {
  let value: unknown = node;
  for (const key of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
