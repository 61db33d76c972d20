import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExpressionContext, TaskView } from "./expression-context";
import { interpolationText } from "./json-value";
import { referencedRefs } from "./referenced-refs";
import { resolveTemplate } from "./resolve-template";

function contextFor(input: Record<string, unknown>, tasks: Record<string, TaskView> = {}, lookups: string[] = []): ExpressionContext {
  return {
    workflow: { workflowId: "wf", workflowType: "t", version: 1, status: "RUNNING", input, variables: {}, startTime: 0 },
    task(ref) {
      lookups.push(ref);
      return Object.prototype.hasOwnProperty.call(tasks, ref) ? tasks[ref] : undefined;
    },
  };
}

function taskView(ref: string, output: Record<string, unknown>): TaskView {
  return { taskId: `id-${ref}`, referenceTaskName: ref, taskType: "SIMPLE", status: "COMPLETED", input: {}, output, iteration: 0, retryCount: 0 };
}

// Keys without braces: braces always count towards `${…}` balancing, in Conductor as here.
const keyChars = fc.constantFrom(..."abcXYZ019 _-.'\"\\$@[]()*?,:!=<>~/".split(""));
const key = fc.string({ unit: keyChars, maxLength: 8 });
const jsonValue = fc.jsonValue({ maxDepth: 4 });
// Nested keys and strings use the same brace-free alphabet.
const input = fc.dictionary(key, fc.jsonValue({ maxDepth: 5, stringUnit: keyChars }), { maxKeys: 6 });

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Walks `value` along `choices`, returning the path taken in JSONPath syntax and the value found. */
function pickPath(root: unknown, choices: number[], dotted: boolean[]): [string, unknown] {
  let path = "";
  let value = root;
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i] as number;
    if (Array.isArray(value) && value.length > 0) {
      const index = choice % value.length;
      path += `[${index}]`;
      value = value[index];
    } else if (typeof value === "object" && value !== null && Object.keys(value).length > 0) {
      const keys = Object.keys(value);
      const k = keys[choice % keys.length] as string;
      path += dotted[i] === true && IDENTIFIER.test(k) ? `.${k}` : `['${k.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}']`;
      value = (value as Record<string, unknown>)[k];
    } else {
      break;
    }
  }
  return [path, value];
}

describe("properties", () => {
  it("a template with no `${` resolves to itself", () => {
    fc.assert(
      fc.property(
        jsonValue.filter((v) => !JSON.stringify(v).includes("${")),
        (template) => {
          expect(resolveTemplate(template, contextFor({}))).toEqual(template);
        },
      ),
    );
  });

  it("`${workflow.input<path>}` is the value at that path, with its type", () => {
    fc.assert(
      fc.property(input, fc.array(fc.nat(), { maxLength: 7 }), fc.array(fc.boolean(), { maxLength: 7 }), (data, choices, dotted) => {
        const [path, expected] = pickPath(data, choices, dotted);
        expect(resolveTemplate(`\${workflow.input${path}}`, contextFor(data))).toEqual(expected);
      }),
    );
  });

  it("text around one expression is kept and the value interpolated", () => {
    const text = fc.string({ unit: fc.constantFrom(..."ab c\n.:/-_".split("")), maxLength: 10 });
    fc.assert(
      fc.property(text, jsonValue, text, (before, value, after) => {
        fc.pre(before !== "" || after !== "");
        expect(resolveTemplate(`${before}\${workflow.input.v}${after}`, contextFor({ v: value }))).toBe(before + interpolationText(value) + after);
      }),
    );
  });

  it("referencedRefs finds every ref placed in random nested templates", () => {
    const refName = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/).filter((r) => r !== "workflow");
    const forms = [
      (r: string) => `\${${r}.output.x}`,
      (r: string) => `\${${r}.status}`,
      (r: string) => `pre \${${r}.input.a[0]} post`,
      (r: string) => `\${workflow.input.\${${r}.output.k}}`,
      (r: string) => `\${workflow.input.list[?(@.id == $.${r}.output.id)]}`,
      (r: string) => `\${$['${r}'].output}`,
      (r: string) => `\${${r}.output.ids[\${workflow.input.i}]}`,
      (r: string) => `\${${r}}`,
    ];
    const noise = ["plain", "${workflow.input.x}", "$${fake.output}", "${", "${}", 7, null, true];
    const placement = fc.record({
      ref: refName,
      form: fc.nat(forms.length - 1),
      wrap: fc.array(fc.oneof(fc.constant<"array">("array"), key), { maxLength: 6 }),
    });
    fc.assert(
      fc.property(fc.array(placement, { maxLength: 8 }), fc.array(fc.nat(noise.length - 1), { maxLength: 4 }), (placements, noiseIdx) => {
        const value: Record<string, unknown> = {};
        placements.forEach((p, i) => {
          let v: unknown = (forms[p.form] as (r: string) => string)(p.ref);
          for (const w of p.wrap) v = w === "array" ? [v] : Object.fromEntries([[w, v]]);
          value[`p${i}`] = v;
        });
        noiseIdx.forEach((n, i) => (value[`n${i}`] = noise[n]));
        const result = referencedRefs(value);
        expect([...result.refs].sort()).toEqual([...new Set(placements.map((p) => p.ref))].sort());
        expect(result.problems.every((p) => p.code === "unclosed-expression" || p.code === "empty-expression")).toBe(true);
      }),
    );
  });

  it("resolution only looks up the refs static analysis reported (invariant 6)", () => {
    const token = fc.constantFrom(
      "${", "}", "$${", "workflow", "a", "b", ".", "input", "output", "[", "]", "'", "[?(", ")", "@", "$", "$.", "*", "..", "0", " ", " == ", "x",
      "length()", "['a']", "['a','b']", "[?(@.x == $.b.output.x)]", "${workflow.input.x}", "${a.output.x}",
    );
    // Values that are themselves ref names and path fragments, to tempt computed paths into other tasks.
    const tasks = { a: taskView("a", { x: "b", b: { x: 1 } }), b: taskView("b", { x: "a", f: "[?(@ == $.a.output.x)]" }) };
    fc.assert(
      fc.property(fc.array(token, { maxLength: 30 }), (tokens) => {
        const template = tokens.join("");
        const lookups: string[] = [];
        resolveTemplate(template, contextFor({ x: "a", a: "output", f: "$.b.output.x" }, tasks, lookups));
        const analysis = referencedRefs(template);
        for (const ref of lookups) expect(analysis.refs).toContain(ref);
      }),
      { numRuns: 2000 },
    );
  });

  it("never throws on arbitrary strings", () => {
    const unit = fc.constantFrom(..."${}[]().'\"?@*!=<>&|,:-0123 abwinputoutputflow\\".split(""));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 80 }), (text) => {
        const ctx = contextFor({ a: [1, { b: 2 }] }, { a: taskView("a", { b: [1, 2] }) });
        resolveTemplate(text, ctx);
        resolveTemplate(`\${workflow.input.${text}}`, ctx);
        resolveTemplate(`\${a.output[?(${text})]}`, ctx);
        referencedRefs([text, `\${workflow.${text}}`, `\${a.output[?(${text})]}`]);
      }),
      { numRuns: 2000 },
    );
  });
});
