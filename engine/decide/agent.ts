/**
 * The AGENT node's loop, as the decider runs it (decide.ts calls these; all
 * pure). An agent is a row of its own (type AGENT, executor `decider`,
 * IN_PROGRESS while it works; output `{turn, tokenUsage}`) and, per turn n
 * (from 1), one LLM_CHAT_COMPLETE row `"<agent>#llm"` at iteration n and one
 * row per tool call `"<agent>#tool<k>"` at iteration n, each of its tool's
 * kind. What comes next is decided from those rows alone:
 *
 * - the turn's LLM row completed without tool calls → the agent completes
 *   with the answer;
 * - with tool calls → one task per call, all scheduled in the same
 *   evaluation (so they run in parallel), unless the turn limit or the token
 *   budget is spent (the agent fails, saying which);
 * - every call of the turn ended → the next LLM row, whose messages are the
 *   turn's messages plus the model's tool calls and one result per call.
 *
 * Every step is a task row, so a crash loses at most the step in hand: the
 * next evaluation finds the rows that finished and goes on from them. The
 * conversation travels in the LLM rows' input (each turn's holds all of it),
 * so an evaluation needs the current turn's rows only — at most
 * 1 + AGENT_MAX_TOOL_CALLS_PER_TURN refs (refsToLoad names them).
 */
import { AGENT_DEFAULT_MAX_TURNS } from "../definition";
import type { AgentTool } from "../definition";
import type { BlueprintNode } from "../compile/types";
import { dispatchSites } from "./dispatch-template";
import type { DispatchSite } from "./dispatch-template";

type Json = Record<string, unknown>;

/** The longest tool result handed back to the model, in characters. */
export const AGENT_TOOL_RESULT_MAX_CHARS = 20_000;

export interface AgentToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

export interface AgentUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** The input key naming the tool an HTTP or MCP tool call's task runs: the dispatcher finds the tool's header templates by it. */
export const AGENT_TOOL_INPUT_KEY = "agentTool";

/** What a tool call's row is: its type, task definition, input. */
export interface AgentToolTask {
  taskType: "HTTP" | "SIMPLE" | "SUB_WORKFLOW" | "CALL_MCP_TOOL";
  taskDefName: string;
  input: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The agent's limits from its (resolved) input. */
export function agentLimits(agentInput: Json): { maxTurns: number; tokenBudget: number | undefined } {
  const maxTurns = typeof agentInput.maxTurns === "number" && Number.isInteger(agentInput.maxTurns) && agentInput.maxTurns >= 1 ? agentInput.maxTurns : AGENT_DEFAULT_MAX_TURNS;
  const budget = agentInput.tokenBudget;
  return { maxTurns, tokenBudget: typeof budget === "number" && budget > 0 ? budget : undefined };
}

/** The agent's tools from its (resolved) input; shape-checked at registration, so anything else is dropped. */
export function agentTools(agentInput: Json): AgentTool[] {
  return Array.isArray(agentInput.tools) ? (agentInput.tools.filter((t) => isObject(t) && typeof t.name === "string" && typeof t.type === "string") as AgentTool[]) : [];
}

/** The first turn's LLM_CHAT_COMPLETE input: provider, model, the prompt as the one user message, the tools as the model sees them. */
export function firstTurnInput(agentInput: Json): Json {
  const input: Json = { llmProvider: agentInput.llmProvider, model: agentInput.model };
  if (typeof agentInput.instructions === "string" && agentInput.instructions !== "") input.instructions = agentInput.instructions;
  if (agentInput.temperature !== undefined) input.temperature = agentInput.temperature;
  if (agentInput.maxTokens !== undefined) input.maxTokens = agentInput.maxTokens;
  const prompt = typeof agentInput.prompt === "string" ? agentInput.prompt : JSON.stringify(agentInput.prompt ?? "");
  input.messages = [{ role: "user", message: prompt }];
  const tools = agentTools(agentInput);
  if (tools.length > 0) {
    input.tools = tools.map((t) => ({
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: t.inputSchema ?? { type: "object", properties: {} },
    }));
  }
  return input;
}

/** The tool calls an LLM row's output asks for (`toolCalls: [{id, name, arguments}]`). */
export function toolCallsOf(llmOutput: Json): AgentToolCall[] {
  const calls = llmOutput.toolCalls;
  if (!Array.isArray(calls)) return [];
  return calls.map((c, k) => {
    const call = isObject(c) ? c : {};
    return { id: typeof call.id === "string" && call.id !== "" ? call.id : `call_${k}`, name: typeof call.name === "string" ? call.name : "", arguments: call.arguments ?? {} };
  });
}

export function usageOf(output: Json): AgentUsage {
  const u = isObject(output.tokenUsage) ? output.tokenUsage : {};
  return { promptTokens: count(u.promptTokens), completionTokens: count(u.completionTokens), totalTokens: count(u.totalTokens) };
}

export function addUsage(a: AgentUsage, b: AgentUsage): AgentUsage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, totalTokens: a.totalTokens + b.totalTokens };
}

const QUERY_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "DELETE"]);

function queryValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}

/**
 * The task that runs `call` with `tool`: the model's arguments become the
 * worker's or sub-workflow's input, the MCP tool's arguments, or the HTTP
 * request's JSON body (query parameters for GET, HEAD and DELETE). A string
 * when the call cannot run: arguments that are not a JSON object.
 */
export function toolTask(tool: AgentTool, call: AgentToolCall): AgentToolTask | string {
  const args = call.arguments;
  if (!isObject(args)) return `the arguments of ${JSON.stringify(call.name)} must be a JSON object, got ${queryValue(args).slice(0, 200)}`;
  switch (tool.type) {
    case "SIMPLE":
      return { taskType: "SIMPLE", taskDefName: tool.taskName, input: { ...args } };
    case "SUB_WORKFLOW":
      return {
        taskType: "SUB_WORKFLOW",
        taskDefName: "SUB_WORKFLOW",
        input: { ...args, subWorkflowName: tool.subWorkflowParam.name, ...(tool.subWorkflowParam.version === undefined ? {} : { subWorkflowVersion: tool.subWorkflowParam.version }) },
      };
    case "CALL_MCP_TOOL":
      return {
        taskType: "CALL_MCP_TOOL",
        taskDefName: "CALL_MCP_TOOL",
        input: { mcpServer: tool.mcp.mcpServer, ...(tool.mcp.headers === undefined ? {} : { headers: tool.mcp.headers }), method: tool.mcp.method ?? tool.name, arguments: args, [AGENT_TOOL_INPUT_KEY]: tool.name },
      };
    case "HTTP": {
      const method = (tool.httpRequest.method ?? "POST").toUpperCase();
      const request: Json = { ...tool.httpRequest, method };
      if (QUERY_METHODS.has(method)) {
        const entries = Object.entries(args);
        if (entries.length > 0) {
          const query = entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(queryValue(v))}`).join("&");
          request.uri = `${tool.httpRequest.uri}${tool.httpRequest.uri.includes("?") ? "&" : "?"}${query}`;
        }
      } else {
        request.body = args;
      }
      return { taskType: "HTTP", taskDefName: "HTTP", input: { http_request: request, [AGENT_TOOL_INPUT_KEY]: tool.name } };
    }
  }
}

/**
 * Where a tool call's task reads secrets: its headers (an HTTP tool's
 * `httpRequest.headers`, an MCP tool's `mcp.headers`), as written on the
 * agent node, at their place in the call's input. Only these: the model's
 * arguments never are, so no answer of a model can make a secret be sent.
 */
export function agentToolDispatchSites(agent: BlueprintNode, toolName: unknown): DispatchSite[] {
  const config = isObject(agent.config.agent) ? agent.config.agent : {};
  const tool = agentTools(config).find((t) => t.name === toolName);
  if (tool?.type === "HTTP") return dispatchSites({ http_request: { headers: tool.httpRequest.headers ?? {} } });
  if (tool?.type === "CALL_MCP_TOOL") return dispatchSites({ headers: tool.mcp.headers ?? {} });
  return [];
}

function clip(text: string): string {
  return text.length <= AGENT_TOOL_RESULT_MAX_CHARS ? text : `${text.slice(0, AGENT_TOOL_RESULT_MAX_CHARS)}… (${text.length - AGENT_TOOL_RESULT_MAX_CHARS} more characters cut)`;
}

/**
 * What the model reads as a tool call's result: a finished row's useful part
 * (an HTTP response's status and body, an MCP tool's text, a worker's or
 * sub-workflow's output) as JSON, or — a call that failed for good — the
 * reason, so the model can recover instead of the agent failing.
 */
export function toolResultText(row: { status: string; taskType: string; output: Json; reasonForIncompletion: string | undefined }): string {
  if (row.status !== "COMPLETED") return clip(`Error: the tool failed (${row.status})${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`);
  const out = row.output;
  if (row.taskType === "HTTP") {
    const response = isObject(out.response) ? out.response : {};
    return clip(JSON.stringify({ statusCode: response.statusCode, body: response.body }) ?? "null");
  }
  if (row.taskType === "CALL_MCP_TOOL") {
    if (out.structuredContent !== undefined) return clip(JSON.stringify(out.structuredContent) ?? "null");
    if (typeof out.text === "string") return clip(out.text);
  }
  return clip(JSON.stringify(out) ?? "{}");
}

/** A HUMAN task's input asking a person to approve one call: the tool, its description, the model's arguments. */
export function approvalInput(tool: AgentTool, call: AgentToolCall): Json {
  return {
    title: `Approve a call of ${tool.name}`,
    assignee: "anyone",
    outcomes: ["approve", "reject"],
    tool: tool.name,
    ...(tool.description === undefined ? {} : { toolDescription: tool.description }),
    arguments: call.arguments,
  };
}

/** Whether an ended approval approved its call: completed with the outcome "approve". */
export function isApproved(row: { status: string; output: Json }): boolean {
  return row.status === "COMPLETED" && row.output.outcome === "approve";
}

/** What the model reads for a call a person did not approve: it did not run. */
export function notApprovedText(row: { status: string; output: Json; reasonForIncompletion: string | undefined }): string {
  const outcome = typeof row.output.outcome === "string" ? row.output.outcome : undefined;
  const why = row.status === "COMPLETED" ? `the outcome was ${JSON.stringify(outcome ?? null)}` : `the approval ended ${row.status}${row.reasonForIncompletion === undefined ? "" : `: ${row.reasonForIncompletion}`}`;
  const comment = typeof row.output.comment === "string" && row.output.comment !== "" ? ` (${clip(row.output.comment)})` : "";
  return `Not run: a person did not approve this call; ${why}${comment}.`;
}

/** The next turn's input: this turn's, its messages followed by the model's tool calls (Conductor's `tool_call` role) and one `tool` message per call, in call order. */
export function nextTurnInput(llmInput: Json, llmOutput: Json, calls: readonly AgentToolCall[], results: readonly string[]): Json {
  const messages = Array.isArray(llmInput.messages) ? [...(llmInput.messages as unknown[])] : [];
  messages.push({ role: "tool_call", message: typeof llmOutput.result === "string" ? llmOutput.result : "", toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) });
  calls.forEach((c, k) => messages.push({ role: "tool", message: results[k] ?? "", toolCallId: c.id, name: c.name }));
  return { ...llmInput, messages };
}

/** The agent's output when the model answers: Conductor's `result` (the text, or the parsed JSON), the turns it took, the tokens all turns used. */
export function agentAnswer(llmOutput: Json, turn: number, usage: AgentUsage): Json {
  return {
    result: llmOutput.result ?? "",
    finishReason: llmOutput.finishReason ?? null,
    turns: turn,
    tokenUsage: usage,
    ...(llmOutput.llmProvider === undefined ? {} : { llmProvider: llmOutput.llmProvider }),
    ...(llmOutput.model === undefined ? {} : { model: llmOutput.model }),
  };
}
