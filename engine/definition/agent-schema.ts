import { z } from "zod";

/**
 * The fields of an AGENT node (`agent` on the node): a model of a configured
 * AI provider, its instructions and prompt, and the tools it may call. Each
 * tool is another node kind — an HTTP call, a worker task, a sub-workflow or
 * an MCP tool — with the name, description and JSON Schema the model sees.
 * The decider runs the loop as ordinary tasks (engine/decide/agent.ts);
 * docs/ai.md describes it. Text fields may hold `${…}` expressions, resolved
 * once when the agent starts.
 */

/** The node kinds a tool can be. */
export const AGENT_TOOL_KINDS = ["HTTP", "SIMPLE", "SUB_WORKFLOW", "CALL_MCP_TOOL"] as const;
export type AgentToolKind = (typeof AGENT_TOOL_KINDS)[number];

/** What OpenAI and Anthropic accept as a tool (function) name. */
export const AGENT_TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Turns when the node names none, and the most it may name. */
export const AGENT_DEFAULT_MAX_TURNS = 10;
export const AGENT_MAX_TURNS = 100;
/** The most tool calls one model turn may ask for; a turn asking for more fails the agent (and bounds what an evaluation loads). */
export const AGENT_MAX_TOOL_CALLS_PER_TURN = 16;
/** The most tools one agent may have. */
export const AGENT_MAX_TOOLS = 64;

const NumberOrExpression = z.union([z.number(), z.string()]);

const toolBase = {
  name: z
    .string({ error: "A tool needs a name" })
    .regex(AGENT_TOOL_NAME_PATTERN, { error: "A tool name is 1–64 letters, digits, _ or -" })
    .meta({ title: "Name", description: "What the model calls the tool; unique within the agent." }),
  description: z.string().optional().meta({ title: "Description", description: "Tells the model when to use the tool and what it does." }),
  inputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ title: "Arguments schema", description: "The JSON Schema of the tool's arguments, as the model sees it; an object with no properties when absent." }),
  approval: z
    .boolean()
    .optional()
    .meta({ title: "Ask for approval", description: "Each call waits in the inbox for a person to approve it; a rejected call is not run, and the model is told so.", default: false }),
};

/** An HTTP tool: the request, with the model's arguments as its JSON body (as query parameters for GET, HEAD and DELETE). */
export const AgentHttpToolSchema = z
  .strictObject({
    ...toolBase,
    type: z.literal("HTTP"),
    httpRequest: z
      .strictObject({
        uri: z.string().min(1, { error: "The HTTP tool needs a uri" }).meta({ title: "URI", description: "Absolute URL; may hold expressions." }),
        method: z.string().optional().meta({ title: "Method", default: "POST" }),
        headers: z.record(z.string(), z.unknown()).optional().meta({ title: "Headers" }),
        connectionTimeOut: z.number().int().min(0).optional().meta({ title: "Connect timeout (ms)" }),
        readTimeOut: z.number().int().min(0).optional().meta({ title: "Read timeout (ms)" }),
      })
      .meta({ title: "HTTP request" }),
  })
  .meta({ title: "HTTP tool" });

/** A worker tool: a SIMPLE task on the queue `taskName`, the model's arguments as its input. */
export const AgentWorkerToolSchema = z
  .strictObject({
    ...toolBase,
    type: z.literal("SIMPLE"),
    taskName: z.string().min(1, { error: "The worker tool needs a taskName (the queue workers poll)" }).meta({ title: "Task type", description: "The queue remote workers poll." }),
  })
  .meta({ title: "Worker tool" });

/** A sub-workflow tool: runs a registered workflow with the model's arguments as its input; its output is the result. */
export const AgentSubWorkflowToolSchema = z
  .strictObject({
    ...toolBase,
    type: z.literal("SUB_WORKFLOW"),
    subWorkflowParam: z
      .strictObject({
        name: z.string().min(1, { error: "The sub-workflow tool needs a workflow name" }).meta({ title: "Workflow" }),
        version: z.number().int().min(1).optional().meta({ title: "Version", description: "Latest when absent." }),
      })
      .meta({ title: "Sub-workflow" }),
  })
  .meta({ title: "Sub-workflow tool" });

/** An MCP tool: CALL_MCP_TOOL on a server, the model's arguments as the tool's arguments. */
export const AgentMcpToolSchema = z
  .strictObject({
    ...toolBase,
    type: z.literal("CALL_MCP_TOOL"),
    mcp: z
      .strictObject({
        mcpServer: z.string().min(1, { error: "The MCP tool needs an mcpServer URL" }).meta({ title: "MCP server" }),
        method: z.string().optional().meta({ title: "Tool on the server", description: "The MCP tool's name; the agent tool's name when absent." }),
        headers: z.record(z.string(), z.unknown()).optional().meta({ title: "Headers" }),
      })
      .meta({ title: "MCP server" }),
  })
  .meta({ title: "MCP tool" });

/** One tool of an agent, by kind. */
export const AgentToolSchema = z.discriminatedUnion("type", [AgentHttpToolSchema, AgentWorkerToolSchema, AgentSubWorkflowToolSchema, AgentMcpToolSchema], {
  error: (issue) => (issue.code === "invalid_union" ? `A tool's type must be one of ${AGENT_TOOL_KINDS.join(", ")}` : undefined),
});
export type AgentTool = z.infer<typeof AgentToolSchema>;

/** An AGENT node's `agent` fields. */
export const AgentConfigSchema = z
  .strictObject({
    llmProvider: z
      .string({ error: "llmProvider is required: the name of an AI provider of this namespace" })
      .min(1, { error: "llmProvider is required: the name of an AI provider of this namespace" })
      .meta({ title: "Provider", description: "The name of an AI provider configured in this namespace (Settings → AI providers)." }),
    model: z
      .string({ error: "model is required: one the provider allows" })
      .min(1, { error: "model is required: one the provider allows" })
      .meta({ title: "Model", description: "One of the models the provider allows." }),
    instructions: z.string().optional().meta({ title: "Instructions", description: "The system prompt: who the agent is and how it works." }),
    prompt: z.string({ error: "prompt is required: the task the agent works on" }).min(1, { error: "prompt is required: the task the agent works on" }).meta({
      title: "Prompt",
      description: "The user message the agent starts from; may hold ${…} expressions.",
    }),
    maxTurns: z
      .number()
      .int()
      .min(1)
      .max(AGENT_MAX_TURNS)
      .optional()
      .meta({ title: "Max turns", description: "Model calls at most; the agent fails when the model still asks for tools in the last one.", default: AGENT_DEFAULT_MAX_TURNS }),
    tokenBudget: z.number().int().min(1).optional().meta({ title: "Token budget", description: "Total tokens (prompt + completion, all turns) at most; the agent fails once a turn passes it." }),
    temperature: NumberOrExpression.optional().meta({ title: "Temperature" }),
    maxTokens: NumberOrExpression.optional().meta({ title: "Max tokens per turn", description: "The longest answer of one model call." }),
    tools: z.array(AgentToolSchema).max(AGENT_MAX_TOOLS).optional().meta({ title: "Tools", description: "What the model may call." }),
  })
  .meta({ title: "Agent" });
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/**
 * An agent's task rows are children of its node, named by ref: the model
 * turns `"<agent>#llm"`, the tool calls `"<agent>#tool<k>"` (k the call's
 * index in its turn) and the approvals asked before a call
 * `"<agent>#approve<k>"` (HUMAN tasks), each with the turn number (from 1) as
 * its iteration and `parentRef` the agent. Node refs have no `#` (REF_PATTERN), and no fork
 * instance ref ends in a non-digit, so these collide with neither.
 */
export const AGENT_LLM_SUFFIX = "#llm";
export const AGENT_TOOL_SUFFIX = "#tool";
export const AGENT_APPROVAL_SUFFIX = "#approve";

export function agentLlmRef(agentRef: string): string {
  return `${agentRef}${AGENT_LLM_SUFFIX}`;
}

export function agentToolRef(agentRef: string, index: number): string {
  return `${agentRef}${AGENT_TOOL_SUFFIX}${index}`;
}

export function agentApprovalRef(agentRef: string, index: number): string {
  return `${agentRef}${AGENT_APPROVAL_SUFFIX}${index}`;
}

/** The agent and role a child ref denotes, or undefined for any other ref. */
export function parseAgentChildRef(ref: string): { agentRef: string; role: "llm" } | { agentRef: string; role: "tool" | "approval"; index: number } | undefined {
  const at = ref.lastIndexOf("#");
  if (at <= 0) return undefined;
  const rest = ref.slice(at);
  if (rest === AGENT_LLM_SUFFIX) return { agentRef: ref.slice(0, at), role: "llm" };
  const m = /^#(tool|approve)(0|[1-9]\d{0,2})$/.exec(rest);
  return m === null ? undefined : { agentRef: ref.slice(0, at), role: m[1] === "tool" ? "tool" : "approval", index: Number(m[2]) };
}

/** Every child ref of an agent whose latest row an evaluation may need (bounded by AGENT_MAX_TOOL_CALLS_PER_TURN). */
export function agentChildRefs(agentRef: string, withApprovals = true): string[] {
  const calls = Array.from({ length: AGENT_MAX_TOOL_CALLS_PER_TURN }, (_, k) => k);
  return [agentLlmRef(agentRef), ...calls.map((k) => agentToolRef(agentRef, k)), ...(withApprovals ? calls.map((k) => agentApprovalRef(agentRef, k)) : [])];
}

/**
 * Whether a path inside an AGENT node (`["agent", "tools", j, …]`) is in a
 * tool's headers: the one place of an agent where `${workflow.secrets.…}` is
 * resolved, when the tool call is dispatched (engine/decide/agent.ts).
 */
export function isAgentToolHeaderPath(path: readonly (string | number)[]): boolean {
  return path[0] === "agent" && path[1] === "tools" && typeof path[2] === "number" && (path[3] === "httpRequest" || path[3] === "mcp") && path[4] === "headers" && path.length > 5;
}
