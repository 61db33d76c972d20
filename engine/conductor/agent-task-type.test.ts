import { describe, expect, it } from "vitest";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { conductorDef, mustImport, nodeOf } from "./test-helpers";

const agent: ConductorWorkflowTask = {
  name: "helper",
  taskReferenceName: "helper",
  type: "AGENT",
  inputParameters: {
    llmProvider: "local",
    model: "gpt-test",
    instructions: "You help.",
    prompt: "${workflow.input.question}",
    maxTurns: 4,
    tools: [{ name: "lookup", type: "SIMPLE", taskName: "user_lookup" }],
    extra: "kept",
  },
};

describe("the AGENT task type", () => {
  it("exports the node's agent fields as inputParameters and imports them back", () => {
    const def = mustImport(conductorDef([agent]));
    const { extra, ...fields } = agent.inputParameters!;
    expect(nodeOf(def, "helper")).toMatchObject({ type: "AGENT", agent: fields, input: { extra } });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]).toMatchObject({ type: "AGENT", inputParameters: agent.inputParameters });
  });

  it("refuses an AGENT without its prompt, naming the field", () => {
    const { prompt: _prompt, ...rest } = agent.inputParameters!;
    expect(() => mustImport(conductorDef([{ ...agent, inputParameters: rest }]))).toThrow(/inputParameters\.prompt/);
  });
});
