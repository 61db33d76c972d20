import { describe, expect, it } from "vitest";
import { Harness } from "../decide/test-harness";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { importConductorWorkflow } from "./import-workflow";
import { conductorDef, mustImport, nodeOf } from "./test-helpers";

const chat: ConductorWorkflowTask = {
  name: "plan_action",
  taskReferenceName: "plan",
  type: "LLM_CHAT_COMPLETE",
  inputParameters: {
    llmProvider: "anthropic",
    model: "claude-sonnet-4-20250514",
    instructions: "You plan.",
    messages: [{ role: "user", message: "Decide what to do for: ${workflow.input.task}" }],
    temperature: 0.1,
    maxTokens: 200,
    stopWords: ["END"],
    jsonOutput: true,
    extra: "kept",
  },
};

const search: ConductorWorkflowTask = {
  name: "search_docs",
  taskReferenceName: "search",
  type: "LLM_SEARCH_INDEX",
  inputParameters: { vectorDB: "pg", namespace: "kb", index: "docs", embeddingModelProvider: "openai", embeddingModel: "text-embedding-3-small", query: "${workflow.input.q}", maxResults: 3 },
};

describe("the LLM task types", () => {
  it("import Conductor's inputParameters into the node's llm fields and export them back unchanged", () => {
    const def = mustImport(conductorDef([chat, search]));
    const { extra, ...fields } = chat.inputParameters!;
    expect(nodeOf(def, "plan")).toMatchObject({ type: "LLM_CHAT_COMPLETE", llm: fields, input: { extra } });
    expect(nodeOf(def, "search")).toMatchObject({ type: "LLM_SEARCH_INDEX", llm: search.inputParameters });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]).toMatchObject({ type: "LLM_CHAT_COMPLETE", inputParameters: chat.inputParameters });
    expect(exported.workflowDef.tasks[1]).toMatchObject({ type: "LLM_SEARCH_INDEX", inputParameters: search.inputParameters });
  });

  it("name the field Conductor requires when it is missing", () => {
    const { llmProvider: _dropped, ...noProvider } = chat.inputParameters!;
    const result = importConductorWorkflow(conductorDef([{ ...chat, inputParameters: noProvider }]));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.message)).toContain('The LLM_CHAT_COMPLETE "plan" needs inputParameters.llmProvider');
    const noQuery = importConductorWorkflow(conductorDef([{ ...search, inputParameters: { ...search.inputParameters, query: "" } }]));
    expect(noQuery.ok).toBe(false);
  });

  it("are queued for the system runner with their fields resolved into the input", () => {
    const h = new Harness(mustImport(conductorDef([chat])), { input: { task: "refund order 7" } });
    const scheduled = h.evaluate().commands.find((c) => c.kind === "scheduleTask");
    expect(scheduled).toMatchObject({
      taskType: "LLM_CHAT_COMPLETE",
      executor: "system",
      input: { llmProvider: "anthropic", messages: [{ role: "user", message: "Decide what to do for: refund order 7" }], maxTokens: 200, extra: "kept" },
    });
  });
});
