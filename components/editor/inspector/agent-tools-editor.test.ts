import { describe, expect, it } from "vitest";
import { AgentToolSchema } from "@/engine";
import { freshToolName, toolOfKind } from "./agent-tools-editor";

describe("the agent's tool list editor", () => {
  it("switches a tool's kind keeping its name, description and schema, with a valid config of the new kind", () => {
    const base = { name: "lookup", description: "Find a user", inputSchema: { type: "object" } };
    for (const kind of ["HTTP", "SIMPLE", "SUB_WORKFLOW", "CALL_MCP_TOOL"] as const) {
      const tool = toolOfKind(base, kind);
      expect(tool).toMatchObject({ ...base, type: kind });
      expect(AgentToolSchema.safeParse(tool).success).toBe(true);
    }
  });

  it("names a new tool with a name no other tool has", () => {
    const tools = [toolOfKind({ name: "tool_2", description: undefined, inputSchema: undefined }, "SIMPLE")];
    expect(freshToolName(tools)).toBe("tool_3");
    expect(freshToolName([])).toBe("tool_1");
  });
});
