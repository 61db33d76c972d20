import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { convertImport, detectFormat, formatPath, lineAndColumn, nameProblem, parseJsonText, proposedName } from "./import-file";

const graph = {
  schemaVersion: 1,
  name: "hello",
  nodes: [{ ref: "greet", type: "SIMPLE", name: "greet", position: { x: 10, y: 20 } }],
  edges: [],
};

const conductor = {
  name: "legacy_flow",
  version: 3,
  tasks: [
    { name: "fetch", taskReferenceName: "fetch", type: "SIMPLE" },
    { name: "store", taskReferenceName: "store", type: "SIMPLE", inputParameters: { data: "${fetch.output.body}" } },
  ],
};

describe("parseJsonText", () => {
  it("parses valid JSON", () => {
    expect(parseJsonText('{"a": [1, 2]}')).toEqual({ ok: true, value: { a: [1, 2] } });
  });

  it("locates a syntax error by line and column", () => {
    const text = '{\n  "name": "x",\n  "nodes": [1, 2,]\n}';
    const parsed = parseJsonText(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issue.location).toBe("line 3, column 18");
    expect(parsed.issue.message).toMatch(/^Not valid JSON: /);
  });

  it("says so for an empty file, and refuses comments (JSON has none)", () => {
    expect(parseJsonText("  \n")).toMatchObject({ ok: false, issue: { message: "The file is empty" } });
    expect(parseJsonText('{ // hi\n "a": 1 }')).toMatchObject({ ok: false, issue: { location: "line 1, column 3" } });
  });
});

describe("lineAndColumn and formatPath", () => {
  it("counts from 1", () => {
    expect(lineAndColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
  });

  it("reads like code", () => {
    expect(formatPath(["tasks", 2, "decisionCases", "big case", 0, "type"])).toBe('tasks[2].decisionCases["big case"][0].type');
    expect(formatPath([])).toBe("");
  });
});

describe("detectFormat", () => {
  it("tells the two formats apart, and neither", () => {
    expect(detectFormat(graph)).toBe("node-flow");
    expect(detectFormat(conductor)).toBe("conductor");
    expect(detectFormat({ name: "x" })).toBeNull();
    expect(detectFormat([graph])).toBeNull();
    expect(detectFormat("text")).toBeNull();
  });
});

describe("convertImport", () => {
  it("accepts a valid node-flow graph unchanged but for the chosen name", () => {
    const verdict = convertImport(graph, "hello-copy");
    expect(verdict).toEqual({ ok: true, format: "node-flow", definition: { ...graph, name: "hello-copy" }, warnings: [] });
  });

  it("converts a Conductor WorkflowDef into a graph with positions", () => {
    const verdict = convertImport(conductor, proposedName(conductor));
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.format).toBe("conductor");
    expect(verdict.definition.name).toBe("legacy_flow");
    expect(verdict.definition.nodes.map((n) => n.ref)).toEqual(["fetch", "store"]);
    expect(verdict.definition.edges).toEqual([expect.objectContaining({ source: "fetch", target: "store" })]);
    for (const node of verdict.definition.nodes) expect([typeof node.position.x, typeof node.position.y]).toEqual(["number", "number"]);
  });

  it("imports the engine's kitchen-sink Conductor fixture", () => {
    const text = readFileSync(path.join(process.cwd(), "engine/conductor/fixtures/kitchen-sink.json"), "utf8");
    const parsed = parseJsonText(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(convertImport(parsed.value, proposedName(parsed.value)).ok).toBe(true);
  });

  it("reports every problem of an invalid graph with its location and node", () => {
    const broken = { ...graph, nodes: [{ ref: "greet", type: "SIMPLE", position: { x: 0, y: 0 } }], edges: [{ source: "greet", target: "ghost" }] };
    const verdict = convertImport(broken, "hello");
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.issues).toContainEqual(expect.objectContaining({ code: "missing-field", location: "nodes[0].name", ref: "greet" }));
    expect(verdict.issues.some((i) => i.code === "unknown-ref" && i.location?.startsWith("edges[0]"))).toBe(true);
  });

  it("points Conductor problems into the Conductor JSON", () => {
    const verdict = convertImport({ ...conductor, tasks: [{ name: "k", taskReferenceName: "k", type: "KAFKA_PUBLISH" }] }, "legacy_flow");
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.issues.map((i) => [i.code, i.location?.startsWith("tasks[0]")])).toEqual([["unsupported-task-type", true]]);
  });

  it("refuses a file that is neither format", () => {
    expect(convertImport({ hello: "world" }, "x")).toMatchObject({ ok: false, format: null, issues: [{ code: "unknown-format" }] });
  });

  it("a bad name is the name's problem, and a good one clears it", () => {
    expect(nameProblem("")).toBe("Give the workflow a name");
    expect(nameProblem("a:b")).not.toBeNull();
    expect(nameProblem("orders")).toBeNull();
    expect(convertImport(graph, "a:b").ok).toBe(false);
    expect(convertImport(graph, "ab").ok).toBe(true);
  });
});
