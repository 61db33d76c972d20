import { describe, expect, it } from "vitest";
import { validateDefinition } from "../definition";
import { chain, edge, node, simple, workflow } from "../definition/test-fixtures";
import { compile } from "./compile";
import { forkInstanceRef, parseForkInstanceRef, refsToLoad } from "./refs-to-load";

function bp(def: unknown): ReturnType<typeof compile> {
  const result = validateDefinition(def);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return compile(result.definition);
}

describe("fork instance refs", () => {
  it("round-trip and never parse from a node ref", () => {
    expect(forkInstanceRef("fan", 12)).toBe("fan#12");
    expect(parseForkInstanceRef("fan#12")).toEqual({ forkRef: "fan", index: 12 });
    expect(parseForkInstanceRef("fan__12")).toBeUndefined();
    expect(parseForkInstanceRef("fan#")).toBeUndefined();
    expect(parseForkInstanceRef("fan#01")).toBeUndefined();
    expect(parseForkInstanceRef("#1")).toBeUndefined();
  });
});

describe("refsToLoad", () => {
  const refs = Array.from({ length: 1000 }, (_, i) => `n${i}`);
  const longChain = bp(workflow(refs.map((r, i) => simple(r, i === 0 ? {} : { input: { v: `\${n${i - 1}.output.v}`, first: "${n0.output}" } })), chain(...refs)));

  it("is O(refs used): a completion in a 1,000-node chain loads a handful of rows", () => {
    expect(refsToLoad(longChain, [], ["n500"])).toEqual(["n0", "n500", "n501"]);
    expect(refsToLoad(longChain, ["n700"], [])).toEqual(["n0", "n700"]);
  });

  it("always includes the start nodes and the output's reads", () => {
    const b = bp(workflow([simple("a"), simple("b"), simple("c")], chain("a", "b", "c"), { outputParameters: { x: "${b.output}" } }));
    expect(refsToLoad(b, [], [])).toEqual(["a", "b"]);
  });

  it("follows nodes decide resolves itself, and past a SWITCH the whole dead path", () => {
    const b = bp(
      workflow(
        [
          simple("a"),
          node("NOOP", "n"),
          node("SWITCH", "s", { cases: ["x"], input: { switchCaseValue: "${a.output.k}" } }),
          simple("x1"),
          simple("x2"),
          simple("x3", { input: { q: "${a.output.q}" } }),
          simple("d1"),
          node("NOOP", "m"),
          simple("after"),
        ],
        [...chain("a", "n", "s"), edge("s", "x1", "x"), ...chain("x1", "x2", "x3", "m"), edge("s", "d1", "default"), edge("d1", "m"), edge("m", "after")],
      ),
    );
    expect(refsToLoad(b, [], ["a"])).toEqual(["a", "after", "d1", "m", "n", "s", "x1", "x2", "x3"]);
    // A completion on a taken branch only looks one step ahead.
    expect(refsToLoad(b, [], ["x1"])).toEqual(["a", "x1", "x2"]);
    // An unseen SKIPPED row (an operator's skip) loads its dead path.
    expect(refsToLoad(b, [], [{ ref: "x1", status: "SKIPPED" }])).toEqual(["a", "d1", "m", "x1", "x2", "x3", "after"].sort());
  });

  it("loads a loop's body with the loop, and the loop with any body task", () => {
    const b = bp(
      workflow(
        [simple("pre"), node("DO_WHILE", "loop", { input: { times: 3 } }), simple("b1", { parent: "loop" }), simple("b2", { parent: "loop" }), simple("post")],
        [...chain("pre", "loop", "post"), edge("b1", "b2")],
      ),
    );
    expect(refsToLoad(b, ["loop", "b2"], [])).toEqual(["b1", "b2", "loop", "post", "pre"]);
    expect(refsToLoad(b, [], ["b1"])).toEqual(["b1", "b2", "loop", "post", "pre"]);
    expect(refsToLoad(b, [], ["pre"])).toEqual(["b1", "b2", "loop", "post", "pre"]);
  });

  it("maps dynamic-fork instances to their fork and never returns instance refs", () => {
    const b = bp(workflow([node("FORK_JOIN_DYNAMIC", "fan"), simple("after", { input: { r: "${fan.output.results}" } })], [edge("fan", "after")]));
    // An instance's end only counts towards (or ends) the fork through the shell: the fork's row is all it needs.
    expect(refsToLoad(b, ["fan", "fan#0", "fan#1"], ["fan#2"])).toEqual(["fan"]);
    // The successors are decided when the fork's own row arrives unseen, with its aggregated output.
    expect(refsToLoad(b, [], [{ ref: "fan", status: "COMPLETED" }])).toEqual(["after", "fan"]);
  });

  it("ignores refs the blueprint does not know", () => {
    expect(refsToLoad(longChain, ["nope"], ["nope#1", { ref: "gone", status: "COMPLETED" }])).toEqual(["n0"]);
  });
});
