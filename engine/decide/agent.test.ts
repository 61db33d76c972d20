import { describe, expect, it } from "vitest";
import { validateDefinition } from "../definition";
import { brief, chain, node, simple, workflow } from "../definition/test-fixtures";
import type { Json } from "../definition/test-fixtures";
import { compile, refsToLoad } from "../compile";
import { Harness } from "./test-harness";

const tools = [
  { name: "weather", type: "HTTP", description: "Weather by city", inputSchema: { type: "object", properties: { city: { type: "string" } } }, httpRequest: { uri: "https://api.example.com/weather" } },
  { name: "lookup", type: "SIMPLE", taskName: "user_lookup" },
  { name: "report", type: "SUB_WORKFLOW", subWorkflowParam: { name: "make_report", version: 2 } },
  { name: "search", type: "CALL_MCP_TOOL", mcp: { mcpServer: "https://mcp.example.com/mcp", method: "web_search" } },
];

const agent = (extra: Json = {}, agentExtra: Json = {}) =>
  node("AGENT", "agent", { agent: { llmProvider: "local", model: "m", instructions: "Help.", prompt: "Hi ${workflow.input.name}", tools, ...agentExtra }, ...extra });

/** pre → agent → post */
const def = (agentExtra: Json = {}, extra: Json = {}) => workflow([simple("pre"), agent(extra, agentExtra), simple("post", { input: { answer: "${agent.output.result}" } })], chain("pre", "agent", "post"));

const harness = (d: Json) => new Harness(d, { checkPartialState: true });

const calls = (...c: [string, string, Json][]) => ({
  result: "",
  finishReason: "tool_calls",
  toolCalls: c.map(([id, name, args]) => ({ id, name, arguments: args })),
  tokenUsage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
});
const answer = (text: string) => ({ result: text, finishReason: "stop", tokenUsage: { promptTokens: 20, completionTokens: 3, totalTokens: 23 } });

function started(d: Json = def()): Harness {
  const h = harness(d);
  h.evaluate();
  h.complete("pre");
  h.evaluate();
  return h;
}

describe("AGENT in the decider", () => {
  it("starts with its row and the first model turn, then runs every tool call of a turn at once, each of its kind", () => {
    const h = started();
    expect(h.scheduled()).toEqual(["agent", "agent#llm@1"]);
    expect(h.task("agent")).toMatchObject({ status: "IN_PROGRESS", taskType: "AGENT", output: { turn: 1 } });
    expect(h.task("agent#llm")).toMatchObject({
      taskType: "LLM_CHAT_COMPLETE",
      iteration: 1,
      parentRef: "agent",
      input: { llmProvider: "local", model: "m", instructions: "Help.", messages: [{ role: "user", message: "Hi null" }] },
    });
    expect((h.task("agent#llm").input.tools as Json[]).map((t) => t.name)).toEqual(["weather", "lookup", "report", "search"]);

    h.complete("agent#llm", calls(["c1", "weather", { city: "Oslo" }], ["c2", "lookup", { id: "u1" }], ["c3", "report", { topic: "x" }], ["c4", "search", { q: "y" }]), 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#tool0@1", "agent#tool1@1", "agent#tool2@1", "agent#tool3@1"]);
    expect(h.task("agent#tool0")).toMatchObject({ taskType: "HTTP", input: { http_request: { uri: "https://api.example.com/weather", method: "POST", body: { city: "Oslo" } } } });
    expect(h.task("agent#tool1")).toMatchObject({ taskType: "SIMPLE", taskDefName: "user_lookup", input: { id: "u1" } });
    expect(h.task("agent#tool2")).toMatchObject({ taskType: "SUB_WORKFLOW", input: { topic: "x", subWorkflowName: "make_report", subWorkflowVersion: 2 } });
    expect(h.last("startSubWorkflow")).toMatchObject([{ name: "make_report", version: 2, input: { topic: "x" } }]);
    expect(h.task("agent#tool3")).toMatchObject({ taskType: "CALL_MCP_TOOL", input: { mcpServer: "https://mcp.example.com/mcp", method: "web_search", arguments: { q: "y" } } });
  });

  it("waits for every call of the turn, then asks the model again with the calls and their results; its answer ends the agent", () => {
    const h = started();
    h.complete("agent#llm", calls(["c1", "weather", { city: "Oslo" }], ["c2", "lookup", { id: "u1" }]), 1);
    h.evaluate();
    h.complete("agent#tool1", { name: "Ada" }, 1);
    h.evaluate();
    expect(h.scheduled()).toEqual([]);
    h.fail("agent#tool0", "HTTP 503", "FAILED_WITH_TERMINAL_ERROR", 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#llm@2"]);
    expect(h.task("agent").output).toEqual({ turn: 2, tokenUsage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } });
    const messages = h.task("agent#llm", 2).input.messages as Json[];
    expect(messages.slice(1)).toEqual([
      { role: "tool_call", message: "", toolCalls: [{ id: "c1", name: "weather", arguments: { city: "Oslo" } }, { id: "c2", name: "lookup", arguments: { id: "u1" } }] },
      { role: "tool", message: "Error: the tool failed (FAILED_WITH_TERMINAL_ERROR): HTTP 503", toolCallId: "c1", name: "weather" },
      { role: "tool", message: '{"name":"Ada"}', toolCallId: "c2", name: "lookup" },
    ]);
    h.complete("agent#llm", answer("Ada, it is raining."), 2);
    h.evaluate();
    expect(h.task("agent")).toMatchObject({ status: "COMPLETED", output: { result: "Ada, it is raining.", turns: 2, tokenUsage: { promptTokens: 30, completionTokens: 8, totalTokens: 38 } } });
    expect(h.scheduled()).toEqual(["post"]);
    expect(h.task("post").input).toEqual({ answer: "Ada, it is raining." });
  });

  it("retries a failed model call by the node's policy, then fails the agent and the workflow", () => {
    const h = started(def({}, { policy: { retryCount: 1, retryDelaySeconds: 0 } }));
    h.fail("agent#llm", "provider 500", "FAILED", 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#llm@1#a1"]);
    h.fail("agent#llm", "provider 500 again", "FAILED", 1);
    h.evaluate();
    expect(h.task("agent")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(h.workflow.status).toBe("FAILED");
  });

  it("fails at its turn limit and over its token budget, scheduling no tool", () => {
    const limited = started(def({ maxTurns: 1 }));
    limited.complete("agent#llm", calls(["c1", "weather", {}]), 1);
    limited.evaluate();
    expect(limited.scheduled()).toEqual([]);
    expect(limited.task("agent").reasonForIncompletion).toBe("AGENT reached its limit of 1 turn and the model still asked for tools (weather)");
    expect(limited.workflow.status).toBe("FAILED");

    const budget = started(def({ tokenBudget: 10 }));
    budget.complete("agent#llm", calls(["c1", "weather", {}]), 1);
    budget.evaluate();
    expect(budget.task("agent").reasonForIncompletion).toBe("AGENT used 15 tokens in 1 turn, over its tokenBudget of 10");
  });

  it("hands calls that cannot run (no such tool, arguments not an object) back to the model at once", () => {
    const h = started();
    h.complete("agent#llm", calls(["c1", "nope", {}], ["c2", "lookup", { id: "u1" }]), 1);
    h.rows.find((r) => r.ref === "agent#llm")!.output.toolCalls = [
      { id: "c1", name: "nope", arguments: {} },
      { id: "c2", name: "weather", arguments: "Oslo" },
    ];
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#llm@2"]);
    expect(h.task("agent#tool0")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: 'the agent has no tool named "nope" (it has "weather", "lookup", "report", "search")' });
    expect(h.task("agent#tool1").reasonForIncompletion).toBe('the arguments of "weather" must be a JSON object, got Oslo');
  });
});

describe("AGENT approvals", () => {
  const approvalDef = () =>
    def({
      tools: [
        { name: "pay", type: "SIMPLE", taskName: "payments", approval: true },
        { name: "refund", type: "SIMPLE", taskName: "refunds", approval: true },
        { name: "lookup", type: "SIMPLE", taskName: "user_lookup" },
      ],
    });

  it("asks a person before each call of a tool that wants approval; an approved call runs, a rejected one is reported to the model", () => {
    const h = started(approvalDef());
    h.complete("agent#llm", calls(["c1", "pay", { amount: 5 }], ["c2", "refund", { amount: 2 }], ["c3", "lookup", { id: "u1" }]), 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#approve0@1", "agent#approve1@1", "agent#tool2@1"]);
    expect(h.task("agent#approve0")).toMatchObject({ taskType: "HUMAN", status: "IN_PROGRESS", input: { title: "Approve a call of pay", outcomes: ["approve", "reject"], arguments: { amount: 5 } } });
    h.complete("agent#approve0", { outcome: "approve" }, 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#tool0@1"]);
    expect(h.task("agent#tool0").input).toEqual({ amount: 5 });
    h.complete("agent#approve1", { outcome: "reject", comment: "too much" }, 1);
    h.complete("agent#tool2", { name: "Ada" }, 1);
    h.evaluate();
    expect(h.scheduled()).toEqual([]);
    expect(h.has("agent#tool1")).toBe(false);
    h.complete("agent#tool0", { paid: true }, 1);
    h.evaluate();
    expect(h.scheduled()).toEqual(["agent#llm@2"]);
    expect((h.task("agent#llm", 2).input.messages as Json[]).slice(2).map((m) => m.message)).toEqual([
      '{"paid":true}',
      'Not run: a person did not approve this call; the outcome was "reject" (too much).',
      '{"name":"Ada"}',
    ]);
    const valid = validateDefinition(approvalDef());
    if (!valid.ok) throw new Error(JSON.stringify(valid.problems));
    expect(refsToLoad(compile(valid.definition), ["agent"], [])).toEqual(expect.arrayContaining(["agent#approve0", "agent#approve15"]));
  });
});

describe("AGENT definitions", () => {
  it("are refused with a clear problem: missing provider, model or prompt, a duplicate tool name, a bad tool kind, an agent in a loop", () => {
    const bad = validateDefinition(
      workflow([
        node("AGENT", "a", { agent: { prompt: "x", tools: [{ name: "t", type: "SIMPLE", taskName: "q" }, { name: "t", type: "SIMPLE", taskName: "q" }] } }),
        node("AGENT", "b", { agent: { llmProvider: "p", model: "m", prompt: "x", tools: [{ name: "t", type: "JDBC" }] } }),
      ]),
    );
    expect(bad.ok).toBe(false);
    const found = bad.ok ? [] : bad.problems;
    expect(found.map((p) => [p.ref, p.path.join("."), p.message])).toEqual(
      expect.arrayContaining([
        ["a", "nodes.0.agent.llmProvider", "agent.llmProvider is required"],
        ["a", "nodes.0.agent.model", "agent.model is required"],
        ["b", "nodes.1.agent.tools.0.type", "agent.tools.0.type: A tool's type must be one of HTTP, SIMPLE, SUB_WORKFLOW, CALL_MCP_TOOL"],
      ]),
    );
    const dup = validateDefinition(workflow([node("AGENT", "a", { agent: { llmProvider: "p", model: "m", prompt: "x", tools: [{ name: "t", type: "SIMPLE", taskName: "q" }, { name: "t", type: "SIMPLE", taskName: "q" }] } })]));
    expect(dup.ok ? [] : brief(dup.problems)).toEqual([{ code: "duplicate-tool", ref: "a", path: ["nodes", 0, "agent", "tools", 1, "name"] }]);
    const looped = validateDefinition(workflow([node("DO_WHILE", "loop"), node("AGENT", "a", { parent: "loop" })]));
    expect(looped.ok ? [] : brief(looped.problems)).toContainEqual({ code: "agent-in-loop", ref: "a", path: ["nodes", 1, "parent"] });
  });

  it("accept secrets in a tool's headers only", () => {
    const headers = { Authorization: "Bearer ${workflow.secrets.TOKEN}" };
    const ok = validateDefinition(
      workflow([
        agent({}, { tools: [{ name: "h", type: "HTTP", httpRequest: { uri: "https://x.example.com", headers } }, { name: "m", type: "CALL_MCP_TOOL", mcp: { mcpServer: "https://m.example.com/mcp", headers } }] }),
      ]),
    );
    expect(ok.ok ? [] : brief(ok.problems)).toEqual([]);
    const bad = validateDefinition(workflow([agent({}, { prompt: "Use ${workflow.secrets.TOKEN}", tools: [{ name: "h", type: "HTTP", httpRequest: { uri: "https://x.example.com/${workflow.secrets.TOKEN}" } }] })]));
    expect(bad.ok ? [] : brief(bad.problems)).toEqual([
      { code: "secret-not-dispatched", ref: "agent", path: ["nodes", 0, "agent", "prompt"] },
      { code: "secret-not-dispatched", ref: "agent", path: ["nodes", 0, "agent", "tools", 0, "httpRequest", "uri"] },
    ]);
  });

  it("load the agent's current-turn rows and its successors while it runs", () => {
    const valid = validateDefinition(def());
    if (!valid.ok) throw new Error(JSON.stringify(valid.problems));
    const refs = refsToLoad(compile(valid.definition), ["agent", "agent#tool1"], [{ ref: "agent#tool0", status: "COMPLETED" }]);
    expect(refs).toEqual(expect.arrayContaining(["agent", "agent#llm", "agent#tool0", "agent#tool15", "post", "pre"]));
    expect(refs).not.toContain("agent#tool16");
    // No tool asks for approval: no approval rows to look up.
    expect(refs).not.toContain("agent#approve0");
  });
});
