import { describe, expect, it } from "vitest";
import { evaluateJsonPath } from "./json-path-evaluator";
import type { PathDocument } from "./json-path-evaluator";
import { parseJsonPath } from "./json-path-parser";

/** Jayway's README document. */
const store = {
  store: {
    book: [
      { category: "reference", author: "Nigel Rees", title: "Sayings of the Century", price: 8.95 },
      { category: "fiction", author: "Evelyn Waugh", title: "Sword of Honour", price: 12.99 },
      { category: "fiction", author: "Herman Melville", title: "Moby Dick", isbn: "0-553-21311-3", price: 8.99 },
      { category: "fiction", author: "J. R. R. Tolkien", title: "The Lord of the Rings", isbn: "0-395-19395-8", price: 22.99 },
    ],
    bicycle: { color: "red", price: 19.95 },
  },
  expensive: 10,
};
const [b0, b1, b2, b3] = store.store.book;

function read(path: string, doc: unknown = store): unknown {
  const parsed = parseJsonPath(path);
  if (!parsed.ok) throw new Error(`${path}: ${parsed.error}`);
  return evaluateJsonPath(parsed.path, doc);
}

describe("parseJsonPath", () => {
  it.each([
    ["workflow.input.x", true],
    ["$.workflow.input.x", true],
    ["  workflow.input.x  ", true],
    ["@.workflow", true],
    ["a['b c'][0]", true],
    ['a["b"]', true],
    ["a['x','y']", true],
    ["a[0,1]", false],
    ["a[*]", false],
    ["a.*", false],
    ["a..b", false],
    ["a[1:2]", false],
    ["a[?(@.x)]", false],
    ["a.length()", true],
    ["a[*].length()", false],
    ["a['x','y'].z", false],
    ["a-b.c$d", true],
  ])("parses %j (definite: %s)", (path, definite) => {
    const parsed = parseJsonPath(path);
    expect(parsed.ok && parsed.path.definite).toBe(definite);
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["a.", "must not end"],
    ["a..", "must not end"],
    ["a...b", "not valid"],
    ["a.b c", "bracket notation"],
    ["a[", "could not parse"],
    ["a['b", "not closed"],
    ["a[b]", "could not parse"],
    ["a[1x]", "bad array index"],
    ["a[1:2:3]", "bad array slice"],
    ["a[?(@.x == 1]", "not closed"],
    ["a[?(@.x ==)]", "unexpected"],
    ["a[?(@.x <> 1)]", "unknown filter operator"],
    ["a[?(@.x =~ /a.*/)]", "regular expressions"],
    ["a[?(@.x == 1) && ]", "expected ']'"],
    ["a[?('lit')]", "cannot stand alone"],
    ["a[?(@.x in [1,2)]", "array literal"],
    ["a.nope()", "does not exist"],
    ["a.concat('x')", "not supported"],
    ["a.length(1)", "takes no arguments"],
    ["a.index(x)", "whole number"],
    ["a.length().b", "last step"],
    ["a..length()", "cannot follow"],
    ["$x", "expected '.' or '['"],
  ])("rejects %j", (path, message) => {
    const parsed = parseJsonPath(path);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(message);
  });

  it("bounds filter nesting instead of overflowing the stack", () => {
    const deep = "a[?(" + "(".repeat(5000) + "@.x" + ")".repeat(5000) + ")]";
    const parsed = parseJsonPath(deep);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain("too deeply");
    const nots = parseJsonPath("a[?(" + "!".repeat(5000) + "@.x)]");
    expect(nots.ok).toBe(false);
    const literal = parseJsonPath("a[?(@.x in " + "[".repeat(5000) + "]".repeat(5000) + ")]");
    expect(literal.ok).toBe(false);
  });
});

describe("evaluateJsonPath on Jayway's README document", () => {
  it.each<[string, unknown]>([
    ["$.store.book[*].author", store.store.book.map((b) => b.author)],
    ["$..author", store.store.book.map((b) => b.author)],
    ["$.store.*", [store.store.book, store.store.bicycle]],
    ["$.store..price", [8.95, 12.99, 8.99, 22.99, 19.95]],
    ["$..book[2]", [b2]],
    ["$..book[-2]", [b2]],
    ["$..book[0,1]", [b0, b1]],
    ["$..book[:2]", [b0, b1]],
    ["$..book[1:2]", [b1]],
    ["$..book[-2:]", [b2, b3]],
    ["$..book[2:]", [b2, b3]],
    ["$..book[?(@.isbn)]", [b2, b3]],
    ["$..book[?(!@.isbn)]", [b0, b1]],
    ["$.store.book[?(@.price < 10)]", [b0, b2]],
    ["$..book[?(@.price <= $['expensive'])]", [b0, b2]],
    ["$..book[?(@.price <= $.expensive && @.category == 'fiction')].title", ["Moby Dick"]],
    ["$..book[?(@.author == 'Nigel Rees' || @.price > 20)].title", ["Sayings of the Century", "The Lord of the Rings"]],
    ["$..book[?(!(@.price > 10))].title", ["Sayings of the Century", "Moby Dick"]],
    ["$..book[?(@.category in ['reference', 'poetry'])].title", ["Sayings of the Century"]],
    ["$..book[?(@.category nin ['fiction'])].title", ["Sayings of the Century"]],
    ["$..book[?(@.title contains 'Dick')].price", [8.99]],
    ["$..book[?(@.isbn size 13)].title", ["Moby Dick", "The Lord of the Rings"]],
    ['$..book[?(@.author == "Evelyn Waugh")].price', [12.99]],
    ["$.store.book.length()", 4],
    ["$.store.bicycle.length()", 2],
    ["$.store.book[0].title.length()", null],
    ["$.store.book[*].price.length()", [null, null, null, null]],
    ["$.store.bicycle.keys()", ["color", "price"]],
    ["$.store.book[0]['author','price']", { author: "Nigel Rees", price: 8.95 }],
    ["$.store.book[0]['author','nope']", { author: "Nigel Rees" }],
    ["$['store']['bicycle']['color']", "red"],
    ["$.store.bicycle.color", "red"],
    ["$.expensive", 10],
    ["$", store],
    ["$.nothing", null],
    ["$.store.book[9]", null],
    ["$.store.bicycle.color.shade", null],
    ["$.store.book.author", null],
    ["$.nothing[*]", []],
    ["$..nothing", []],
    ["$.store.bicycle[?(@.color == 'red')]", [store.store.bicycle]],
    ["$.store.bicycle[?(@.color == 'blue')]", []],
  ])("%s", (path, expected) => {
    expect(read(path)).toEqual(expected);
  });

  it("applies a trailing function to each match, after a scan too", () => {
    // `..book` matches one array, so the per-match function gives one length. (Jayway
    // rewrites a *leading* `$..x.fn()` into `$.fn($..x.*)` and answers 4; Conductor
    // paths start with `workflow` or a ref, so that rewrite never applies to them.)
    expect(read("$..book.length()")).toEqual([4]);
    expect(read("$.store.book[*].title.length()")).toEqual([null, null, null, null]);
  });
});

describe("functions", () => {
  const doc = { n: [3, 1, 2, "x"], e: [], s: "abc", o: { a: 1 }, d: [1, 1, { a: 1 }, { a: 1 }, 2] };
  it.each<[string, unknown]>([
    ["$.n.length()", 4],
    ["$.n.size()", 4],
    ["$.n.min()", 1],
    ["$.n.max()", 3],
    ["$.n.sum()", 6],
    ["$.n.avg()", 2],
    ["$.n.first()", 3],
    ["$.n.last()", "x"],
    ["$.n.index(1)", 1],
    ["$.n.index(-1)", "x"],
    ["$.n.index(9)", null],
    ["$.d.distinct()", [1, { a: 1 }, 2]],
    ["$.e.sum()", null],
    ["$.s.sum()", null],
    ["$.s.length()", null],
    ["$.o.length()", 1],
    ["$.o.keys()", ["a"]],
    ["$.n.keys()", null],
    ["$.missing.length()", null],
    ["$[*].sum()", []],
  ])("%s", (path, expected) => {
    expect(read(path, doc)).toEqual(expected);
  });

  it("computes the population standard deviation", () => {
    expect(read("$.n.stddev()", doc)).toBeCloseTo(Math.sqrt(2 / 3), 12);
  });
});

describe("filter comparisons follow Jayway's ValueNode rules", () => {
  const items = [
    { id: 1, n: 1, s: "1", t: "1.0", b: true, z: null, arr: [1, 2], obj: { k: "v" }, str: "abc" },
    { id: 2, n: 9, s: "9", t: "10", b: false, arr: [], obj: {}, str: "" },
  ];
  const ids = (filter: string): unknown => read(`$[?(${filter})].id`, items);

  it.each<[string, number[]]>([
    ["@.n == 1", [1]],
    ["@.n == '1'", [1]], // number == string: the string is read as a number
    ["@.t == 1", []], // string == number: the number is compared as text, "1.0" != "1"
    ["@.s == 1", [1]],
    ["@.n === '1'", []],
    ["@.n === 1", [1]],
    ["@.n !== 1", [2]],
    ["@.n != 1", [2]],
    ["@.missing != 1", [1, 2]], // a missing value equals nothing
    ["@.missing == null", []],
    ["@.z == null", [1]],
    ["@.b == true", [1]],
    ["@.b != true", [2]],
    ["@.n > 5", [2]],
    ["@.n >= 1", [1, 2]],
    ["@.s < '5'", [1]],
    ["@.t > '5'", []], // text order: "10" < "5"
    ["@.n > '10'", [2]], // number against string compares text: "9" > "10"
    ["@.b > 0", []], // not comparable
    ["@.arr == [1,2]", [1]],
    ["@.obj == {k: 'v'}", [1]],
    ["@.obj == {\"k\": \"v\"}", [1]],
    ["@.arr == 1", []],
    ["@.n in [1, 3]", [1]],
    ["@.n in ['9']", [2]],
    ["@.missing in [null]", []],
    ["@.missing nin [1]", [1, 2]],
    ["@.arr subsetof [1, 2, 3]", [1, 2]],
    ["@.arr anyof [2, 5]", [1]],
    ["@.arr noneof [2, 5]", [2]],
    ["@.arr size 2", [1]],
    ["@.str size 3", [1]],
    ["@.arr empty true", [2]],
    ["@.obj empty false", [1]],
    ["@.str empty true", [2]],
    ["@.arr contains 2", [1]],
    ["@.str contains 'b'", [1]],
    ["@.n in $[0].arr", [1]],
    ["@.arr.length() > 1", [1]],
    ["@.arr[?(@ == 2)]", [1]],
    ["@.obj.k", [1]],
    ["!@.obj.k", [2]],
    ["@.n == -1 || @.n == 9", [2]],
    ["@.n == 1e0", [1]],
  ])("%s", (filter, expected) => {
    expect(ids(filter)).toEqual(expected);
  });
});

describe("the lookup document", () => {
  const calls: string[] = [];
  const doc: PathDocument = {
    top(name) {
      calls.push(name);
      if (name === "workflow") return { found: true, value: { input: { a: 1 } } };
      if (name === "t1") return { found: true, value: { output: { list: [{ v: 1 }, { v: 2 }] } } };
      return { found: false };
    },
  };
  const readDoc = (path: string): unknown => read(path, doc);

  it("is entered by name only", () => {
    expect(readDoc("workflow.input.a")).toBe(1);
    expect(readDoc("$['t1'].output.list[1].v")).toBe(2);
    expect(readDoc("t1.output.list[?(@.v == $.workflow.input.a)]")).toEqual([{ v: 1 }]);
    expect(readDoc("$['workflow','t1']")).toEqual({ workflow: { input: { a: 1 } }, t1: { output: { list: [{ v: 1 }, { v: 2 }] } } });
    expect(readDoc("nope.output")).toBeNull();
  });

  it("never exposes the root itself or lets a path enumerate it", () => {
    expect(readDoc("$")).toBeNull();
    expect(readDoc("$.length()")).toBeNull();
    expect(readDoc("$.*")).toEqual([]);
    expect(readDoc("$..a")).toEqual([]);
    expect(readDoc("$[?(@.input)]")).toEqual([]);
    expect(readDoc("$[0]")).toBeNull();
    expect(calls.every((c) => typeof c === "string")).toBe(true);
  });

  it("does not read the prototype chain", () => {
    expect(read("$.constructor", {})).toBeNull();
    expect(read("$.a.__proto__", { a: {} })).toBeNull();
    expect(read("$.a.toString", { a: {} })).toBeNull();
    expect(read("$.a.length", { a: [1, 2] })).toBeNull();
    expect(read("$.a.length", { a: "abc" })).toBeNull();
  });
});

describe("budget", () => {
  it("abandons a runaway scan with null or []", () => {
    const wide = { a: Array.from({ length: 200 }, (_, i) => ({ i, c: Array.from({ length: 50 }, (_, j) => ({ j })) })) };
    const parsed = parseJsonPath("$..*..*..*");
    if (!parsed.ok) throw new Error(parsed.error);
    expect(evaluateJsonPath(parsed.path, wide, { maxSteps: 10_000 })).toEqual([]);
    const definite = parseJsonPath("$.a[0].c.length()");
    if (!definite.ok) throw new Error(definite.error);
    expect(evaluateJsonPath(definite.path, wide, { maxSteps: 1 })).toBeNull();
    expect(evaluateJsonPath(definite.path, wide)).toBe(50);
  });
});
