import { describe, expect, it } from "vitest";
import { Harness } from "../decide/test-harness";
import { dispatchTemplate } from "../decide/dispatch-template";
import { blueprintNode, compile } from "../compile";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { importConductorWorkflow } from "./import-workflow";
import { conductorDef, mustImport, nodeOf } from "./test-helpers";

const listTools: ConductorWorkflowTask = {
  name: "discover_tools",
  taskReferenceName: "discover",
  type: "LIST_MCP_TOOLS",
  inputParameters: { mcpServer: "${workflow.input.mcpServerUrl}", headers: { Authorization: "Bearer ${workflow.secrets.MCP_TOKEN}" } },
};

const callTool: ConductorWorkflowTask = {
  name: "execute_tool",
  taskReferenceName: "execute",
  type: "CALL_MCP_TOOL",
  inputParameters: { mcpServer: "https://tools.example.com/mcp", method: "${workflow.input.tool}", arguments: { city: "${workflow.input.city}" }, note: "kept" },
};

describe("LIST_MCP_TOOLS and CALL_MCP_TOOL", () => {
  it("import Conductor's inputParameters into the node's mcp fields and export them back unchanged", () => {
    const def = mustImport(conductorDef([listTools, callTool]));
    expect(nodeOf(def, "discover")).toMatchObject({ type: "LIST_MCP_TOOLS", mcp: listTools.inputParameters });
    expect(nodeOf(def, "execute")).toMatchObject({
      type: "CALL_MCP_TOOL",
      mcp: { mcpServer: "https://tools.example.com/mcp", method: "${workflow.input.tool}", arguments: { city: "${workflow.input.city}" } },
      input: { note: "kept" },
    });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]).toMatchObject({ type: "LIST_MCP_TOOLS", inputParameters: listTools.inputParameters });
    expect(exported.workflowDef.tasks[1]).toMatchObject({ type: "CALL_MCP_TOOL", inputParameters: callTool.inputParameters });
  });

  it("need a server, and a call needs the tool's name", () => {
    const noServer = importConductorWorkflow(conductorDef([{ ...listTools, inputParameters: {} }]));
    expect(noServer.ok).toBe(false);
    if (!noServer.ok) expect(noServer.problems.map((p) => p.message)).toContain('The LIST_MCP_TOOLS "discover" needs inputParameters.mcpServer');
    const noMethod = importConductorWorkflow(conductorDef([{ ...callTool, inputParameters: { mcpServer: "https://tools.example.com/mcp" } }]));
    expect(noMethod.ok).toBe(false);
    if (!noMethod.ok) expect(noMethod.problems.map((p) => p.message)).toContain(`The CALL_MCP_TOOL "execute" needs inputParameters.method (the tool's name)`);
  });

  it("are queued for the system runner with their fields resolved into the input", () => {
    const h = new Harness(mustImport(conductorDef([callTool])), { input: { tool: "weather", city: "Oslo" } });
    const scheduled = h.evaluate().commands.find((c) => c.kind === "scheduleTask");
    expect(scheduled).toMatchObject({
      taskType: "CALL_MCP_TOOL",
      executor: "system",
      input: { mcpServer: "https://tools.example.com/mcp", method: "weather", arguments: { city: "Oslo" }, note: "kept" },
    });
  });

  it("hand the dispatcher the header template that reads a secret, at the path it has in the input", () => {
    const blueprint = compile(mustImport(conductorDef([listTools])));
    const node = blueprintNode(blueprint, "discover");
    if (node === undefined) throw new Error("no node");
    expect(dispatchTemplate(node)).toMatchObject({ mcpServer: "${workflow.input.mcpServerUrl}", headers: { Authorization: "Bearer ${workflow.secrets.MCP_TOKEN}" } });
  });
});
