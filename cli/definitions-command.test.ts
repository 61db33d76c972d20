import { describe, expect, it } from "vitest";
import { definitionFileText, definitionOf } from "./definitions-command";

describe("definition files", () => {
  it("are written with sorted keys, without the version, and end in a newline", () => {
    const a = definitionFileText({ version: 3, name: "w", nodes: [{ type: "NOOP", ref: "x" }], edges: [] });
    const b = definitionFileText({ edges: [], nodes: [{ ref: "x", type: "NOOP" }], name: "w", version: 4 });
    expect(a).toBe(b);
    expect(a).toBe('{\n  "edges": [],\n  "name": "w",\n  "nodes": [\n    {\n      "ref": "x",\n      "type": "NOOP"\n    }\n  ]\n}\n');
  });

  it("are read as node-flow or Conductor JSON by their shape, with every problem named", () => {
    const graph = definitionOf(JSON.stringify({ schemaVersion: 1, name: "g", nodes: [{ ref: "x", type: "NOOP", position: { x: 0, y: 0 } }], edges: [] }), "auto");
    expect(graph).toMatchObject({ ok: true, definition: { name: "g" } });
    const conductor = definitionOf(JSON.stringify({ name: "c", tasks: [{ name: "q", taskReferenceName: "t", type: "SIMPLE" }] }), "auto");
    expect(conductor).toMatchObject({ ok: true, definition: { name: "c", nodes: [{ ref: "t", type: "SIMPLE", name: "q" }] } });
    expect(definitionOf("{", "auto")).toMatchObject({ ok: false, problems: [expect.stringMatching(/^not JSON/)] });
    expect(definitionOf("[]", "auto")).toEqual({ ok: false, problems: ["a definition file holds one JSON object"] });
    const bad = definitionOf(JSON.stringify({ schemaVersion: 1, name: "b", nodes: [], edges: [{ source: "x", target: "y" }] }), "nodeflow");
    expect(bad).toMatchObject({ ok: false, name: "b" });
  });
});
