import { CompletionContext } from "@codemirror/autocomplete";
import { EditorState } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import type { WorkflowDefinition, WorkflowNode } from "@/engine";
import {
  completeExpression,
  createUpstreamIndex,
  expressionCompletionSource,
  expressionOptions,
  expressionSpanAt,
  MAX_OPTIONS,
  matchOptions,
  nodeOptions,
  structureSignature,
  workflowOptions,
} from "./expression-completions";

const at = (x: number) => ({ x, y: 0 });

/** start → fetch → (branch: SWITCH) → a | b → end; loop L with body `inner`; `lonely` unconnected. */
function definition(): WorkflowDefinition {
  const nodes: WorkflowNode[] = [
    { ref: "start", type: "SET_VARIABLE", input: { counter: 1 }, position: at(0) },
    { ref: "fetch", type: "HTTP", httpRequest: { uri: "https://example.com" }, position: at(1) },
    { ref: "branch", type: "SWITCH", evaluatorType: "value-param", expression: "k", cases: ["x"], input: { k: "${fetch.output.response.body}" }, position: at(2) },
    { ref: "a", type: "NOOP", position: at(3) },
    { ref: "b", type: "INLINE", evaluatorType: "graaljs", expression: "1", position: at(3) },
    { ref: "end", type: "NOOP", position: at(4) },
    { ref: "L", type: "DO_WHILE", loopCondition: "false", position: at(5) },
    { ref: "inner", type: "NOOP", parent: "L", position: at(0) },
    { ref: "lonely", type: "SET_VARIABLE", input: { late: true }, position: at(6) },
  ];
  return {
    schemaVersion: 1,
    name: "wf",
    nodes,
    edges: [
      { source: "start", target: "fetch" },
      { source: "fetch", target: "branch" },
      { source: "branch", target: "a", case: "x" },
      { source: "branch", target: "b", case: "default" },
      { source: "a", target: "end" },
      { source: "b", target: "end" },
      { source: "end", target: "L" },
    ],
    inputSchema: {
      type: "object",
      properties: { customerId: { type: "string", title: "Customer" }, address: { type: "object", properties: { city: { type: "string" } } }, "odd key": {} },
    },
    variables: { retries: 0 },
  };
}

const labels = (options: readonly { label: string }[]) => options.map((o) => o.label);

describe("workflowOptions", () => {
  it("offers every inputSchema property (nested ones too), the variables and the workflow's fields", () => {
    const got = labels(workflowOptions(definition(), ["extra"]));
    expect(got).toEqual(
      expect.arrayContaining([
        "${workflow.input.customerId}",
        "${workflow.input.address}",
        "${workflow.input.address.city}",
        "${workflow.input['odd key']}",
        "${workflow.variables.retries}",
        "${workflow.variables.extra}",
        "${workflow.workflowId}",
        "${workflow.input}",
        "${workflow.correlationId}",
      ]),
    );
    expect(workflowOptions(definition()).find((o) => o.label === "${workflow.input.customerId}")?.detail).toBe("Customer");
  });

  it("copes with no inputSchema, and with one that is not an object schema", () => {
    expect(labels(workflowOptions({ inputSchema: undefined, variables: undefined }))).toContain("${workflow.workflowId}");
    expect(labels(workflowOptions({ inputSchema: { properties: [1, 2] }, variables: undefined }))).not.toContain("${workflow.input.0}");
  });
});

describe("nodeOptions", () => {
  it("offers output, the type's known output fields, and input", () => {
    expect(labels(nodeOptions([{ ref: "fetch", type: "HTTP" }]))).toEqual([
      "${fetch.output}",
      "${fetch.output.response}",
      "${fetch.output.response.body}",
      "${fetch.output.response.statusCode}",
      "${fetch.output.response.headers}",
      "${fetch.input}",
    ]);
  });
});

describe("expressionOptions", () => {
  it("offers only nodes upstream of the edited one, never itself or anything downstream", () => {
    const def = definition();
    const upstream = createUpstreamIndex();
    const got = labels(expressionOptions(def, "end", upstream(def, "end")));
    for (const ref of ["start", "fetch", "branch", "a", "b"]) expect(got).toContain(`\${${ref}.output}`);
    for (const ref of ["end", "L", "inner", "lonely"]) expect(got).not.toContain(`\${${ref}.output}`);
  });

  it("offers the enclosing loop inside its body", () => {
    const def = definition();
    const got = labels(expressionOptions(def, "inner", createUpstreamIndex()(def, "inner")));
    expect(got).toContain("${L.output.iteration}");
    expect(got).toContain("${end.output}");
  });

  it("offers variables set by upstream SET_VARIABLE nodes only", () => {
    const def = definition();
    const got = labels(expressionOptions(def, "end", createUpstreamIndex()(def, "end")));
    expect(got).toContain("${workflow.variables.counter}");
    expect(got).not.toContain("${workflow.variables.late}");
  });

  it("offers every node for the workflow's output (ref null, no upstream filter)", () => {
    const got = labels(expressionOptions(definition(), null, null));
    expect(got).toContain("${lonely.output}");
    expect(got).toContain("${workflow.variables.late}");
  });
});

describe("createUpstreamIndex", () => {
  it("rebuilds only when the structure changes, not when a node's config does", () => {
    const def = definition();
    const upstream = createUpstreamIndex();
    const first = upstream(def, "end");
    // A config edit: new node objects, same edges array, same structure.
    const edited = { ...def, nodes: def.nodes.map((n) => (n.ref === "a" ? { ...n, label: "A" } : n)) };
    expect(upstream(edited, "end")).toBe(first);
    // A new edge: new answer.
    const rewired = { ...def, edges: [...def.edges, { source: "lonely", target: "end" }] };
    expect(upstream(rewired, "end").has("lonely")).toBe(true);
  });

  it("answers an unknown ref with the empty set", () => {
    expect(createUpstreamIndex()(definition(), "nope").size).toBe(0);
  });

  it("stays fast on 1,000 nodes", () => {
    const nodes: WorkflowNode[] = Array.from({ length: 1000 }, (_, i) => ({ ref: `n${i}`, type: "NOOP", position: at(i) }));
    const edges = nodes.slice(1).map((n, i) => ({ source: `n${i}`, target: n.ref }));
    const def: WorkflowDefinition = { schemaVersion: 1, name: "big", nodes, edges };
    const upstream = createUpstreamIndex();
    const t0 = performance.now();
    const set = upstream(def, "n999");
    const options = expressionOptions(def, "n999", set);
    for (let i = 0; i < 100; i++) upstream({ ...def, nodes: [...nodes] }, "n999");
    expect(set.size).toBe(999);
    expect(options.length).toBeGreaterThan(999);
    // The popup gets the best matches only, prefix matches first.
    const completed = completeExpression("${n99", 5, options);
    expect(completed?.options.length).toBeLessThanOrEqual(MAX_OPTIONS);
    expect(completed?.options[0]?.label).toBe("${n99.output}");
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("signature covers ref, type and parent", () => {
    expect(structureSignature([{ ref: "a", type: "NOOP" }])).not.toBe(structureSignature([{ ref: "a", type: "NOOP", parent: "L" }]));
  });
});

describe("expressionSpanAt", () => {
  it("finds the expression being typed", () => {
    expect(expressionSpanAt("x ${workflow.in", 15)).toEqual({ from: 2, to: 15, typed: "workflow.in" });
    expect(expressionSpanAt("${", 2)).toEqual({ from: 0, to: 2, typed: "" });
    expect(expressionSpanAt("$", 1)).toEqual({ from: 0, to: 1, typed: "" });
  });

  it("extends over the rest of the path and an auto-closed brace", () => {
    expect(expressionSpanAt("${wo}", 4)).toEqual({ from: 0, to: 5, typed: "wo" });
    expect(expressionSpanAt("${workflow.input.x} tail", 5)).toEqual({ from: 0, to: 19, typed: "wor" });
  });

  it("works inside a JSON string and stops at its quote", () => {
    const text = '{"url": "${fetch.out"}';
    expect(expressionSpanAt(text, text.length - 2)).toEqual({ from: 9, to: 20, typed: "fetch.out" });
  });

  it("takes the innermost of nested expressions", () => {
    const text = "${workflow.input.${wor";
    expect(expressionSpanAt(text, text.length)?.typed).toBe("wor");
  });

  it("is null outside expressions, after a closed one, and for the $${ escape", () => {
    expect(expressionSpanAt("plain", 5)).toBeNull();
    expect(expressionSpanAt("${a} b", 6)).toBeNull();
    expect(expressionSpanAt("$${lit", 6)).toBeNull();
    expect(expressionSpanAt("$$", 2)).toBeNull();
  });
});

describe("matchOptions / completeExpression", () => {
  const options = [...workflowOptions(definition()), ...nodeOptions([{ ref: "fetch", type: "HTTP" }])];

  it("puts prefix matches before substring matches", () => {
    const got = labels(matchOptions(options, "workflow.input.c"));
    expect(got[0]).toBe("${workflow.input.customerId}");
    expect(labels(matchOptions(options, "cust"))).toEqual(["${workflow.input.customerId}"]);
  });

  it("is case-insensitive", () => {
    expect(labels(matchOptions(options, "WORKFLOW.WORKFLOWID"))).toEqual(["${workflow.workflowId}"]);
  });

  it("completes only inside an expression unless asked explicitly", () => {
    expect(completeExpression("abc", 3, options)).toBeNull();
    expect(completeExpression("abc", 3, options, true)?.options.length).toBe(Math.min(options.length, MAX_OPTIONS));
    expect(completeExpression("${fetch.output.r", 16, options)?.options.map((o) => o.label)).toContain("${fetch.output.response.body}");
    expect(completeExpression("${zzz", 5, options)).toBeNull();
  });
});

describe("expressionCompletionSource", () => {
  function run(doc: string, pos = doc.length, words: string[] = [], explicit = false) {
    const state = EditorState.create({ doc });
    const source = expressionCompletionSource(() => [...workflowOptions(definition()), ...nodeOptions([{ ref: "fetch", type: "HTTP" }])], words);
    return source(new CompletionContext(state, pos, explicit)) as { from: number; to?: number; options: { label: string }[] } | null;
  }

  it("maps offsets onto the document, on any line", () => {
    const result = run('{\n  "a": "${workflow.input.cu"\n}', 28);
    expect(result?.from).toBe(10);
    expect(result?.options[0]?.label).toBe("${workflow.input.customerId}");
  });

  it("offers plain words outside an expression when given", () => {
    expect(run("PO", 2, ["GET", "POST"])?.options.map((o) => o.label)).toEqual(["GET", "POST"]);
    expect(run("PO", 2)).toBeNull();
  });
});
