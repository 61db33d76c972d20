import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HumanField } from "./human-form-model";
import { HUMAN_FIELD_TYPES, changeFieldType, defaultFromText, defaultToText, fieldProblems, fieldsToForm, formToFields, freshKey, keyAfterLabel, keyFromLabel, move, moveInputKey } from "./human-form-model";

const every: HumanField[] = [
  { key: "name", type: "text", label: "Name", required: true, minLength: 2, maxLength: 40, pattern: "^[A-Z]" },
  { key: "notes", type: "textarea", label: "Notes", required: false, help: "Anything else" },
  { key: "amount", type: "number", label: "Amount", required: true, minimum: 0, maximum: 100 },
  { key: "count", type: "number", label: "Count", required: false, integer: true },
  { key: "size", type: "select", label: "Size", required: false, options: ["S", "M", "L"] },
  { key: "tags", type: "multiselect", label: "Tags", required: false, options: ["a", "b"] },
  { key: "ok", type: "checkbox", label: "OK", required: false },
  { key: "day", type: "date", label: "Day", required: false },
  { key: "mail", type: "email", label: "Mail", required: false },
  { key: "site", type: "url", label: "Site", required: false, maxLength: 200 },
  { key: "order", type: "text", label: "Order", required: false, readOnly: true },
];

describe("fieldsToForm", () => {
  it("writes JSON Schema and a UI schema with the order in ui:order", () => {
    const { schema, uiSchema } = fieldsToForm(every);
    expect(schema).toMatchObject({
      type: "object",
      required: ["name", "amount"],
      properties: {
        name: { type: "string", title: "Name", minLength: 2, maxLength: 40, pattern: "^[A-Z]" },
        notes: { type: "string", title: "Notes", description: "Anything else" },
        amount: { type: "number", title: "Amount", minimum: 0, maximum: 100 },
        count: { type: "integer", title: "Count" },
        size: { type: "string", enum: ["S", "M", "L"] },
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, uniqueItems: true },
        ok: { type: "boolean" },
        day: { type: "string", format: "date" },
        mail: { type: "string", format: "email" },
        site: { type: "string", format: "uri", maxLength: 200 },
      },
    });
    expect(uiSchema).toEqual({
      notes: { "ui:widget": "textarea" },
      tags: { "ui:widget": "checkboxes" },
      order: { "ui:readonly": true },
      "ui:order": every.map((f) => f.key),
    });
  });

  it("an empty list is an object with no properties", () => {
    expect(fieldsToForm([])).toEqual({ schema: { type: "object", properties: {} }, uiSchema: {} });
  });
});

describe("formToFields", () => {
  it("gives back the list it was made from", () => {
    const { schema, uiSchema } = fieldsToForm(every);
    expect(formToFields(schema, uiSchema)).toEqual(every);
  });

  it("survives JSONB reordering the properties: the order is ui:order's", () => {
    const { schema, uiSchema } = fieldsToForm(every);
    const props = schema.properties as Record<string, unknown>;
    const shuffled = { ...schema, properties: Object.fromEntries(Object.entries(props).reverse()) };
    expect(formToFields(shuffled, uiSchema)?.map((f) => f.key)).toEqual(every.map((f) => f.key));
  });

  it("round-trips any list the builder can make", () => {
    const field = fc.record({
      type: fc.constantFrom(...HUMAN_FIELD_TYPES),
      label: fc.string({ maxLength: 8 }),
      required: fc.boolean(),
      help: fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
      readOnly: fc.option(fc.constant(true), { nil: undefined }),
      min: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
      max: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
      options: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(field, { maxLength: 6 }), (drafts) => {
        const fields: HumanField[] = drafts.map((d, i) => {
          let f: HumanField = changeFieldType({ key: `k${i}`, type: "text", label: d.label, required: d.required, ...(d.help ? { help: d.help } : {}), ...(d.readOnly ? { readOnly: true } : {}) }, d.type);
          if (f.type === "number") f = { ...f, ...(d.min !== undefined ? { minimum: d.min } : {}), ...(d.max !== undefined ? { maximum: d.max } : {}) };
          if (f.type === "text" || f.type === "textarea" || f.type === "email" || f.type === "url") f = { ...f, ...(d.max !== undefined ? { maxLength: d.max } : {}) };
          if (f.type === "select" || f.type === "multiselect") f = { ...f, options: d.options };
          return f;
        });
        const { schema, uiSchema } = fieldsToForm(fields);
        expect(formToFields(JSON.parse(JSON.stringify(schema)), JSON.parse(JSON.stringify(uiSchema)))).toEqual(fields);
      }),
    );
  });

  it("is an empty list for no schema, and null for what the builder cannot show", () => {
    expect(formToFields(undefined, undefined)).toEqual([]);
    expect(formToFields({ type: "array" }, {})).toBeNull();
    expect(formToFields({ type: "object", properties: { a: { type: "object", properties: {} } } }, {})).toBeNull();
    expect(formToFields({ type: "object", properties: { a: { type: "string", oneOf: [] } } }, {})).toBeNull();
    expect(formToFields({ type: "object", properties: { a: { type: "string" } } }, { a: { "ui:widget": "password" } })).toBeNull();
    expect(formToFields({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false }, {})).toBeNull();
  });

  it("reads a hand-written schema without ui:order in its own order", () => {
    expect(formToFields({ type: "object", properties: { b: { type: "boolean" }, a: { type: "string", title: "A" } }, required: ["a"] }, undefined)).toEqual([
      { key: "b", type: "checkbox", label: "", required: false },
      { key: "a", type: "text", label: "A", required: true },
    ]);
  });
});

describe("fieldProblems", () => {
  it("finds bad and duplicate keys, inverted bounds, bad patterns and missing options", () => {
    const problems = fieldProblems([
      { key: "a", type: "text", label: "", required: false },
      { key: "a", type: "text", label: "", required: false, pattern: "(" },
      { key: "1x", type: "number", label: "", required: false, minimum: 5, maximum: 1 },
      { key: "s", type: "select", label: "", required: false, options: [] },
    ]);
    expect(problems.get(0)).toBeUndefined();
    expect(problems.get(1)).toEqual(['The key "a" is used by field 1 too.', "The pattern is not a valid regular expression."]);
    expect(problems.get(2)).toHaveLength(2);
    expect(problems.get(3)).toEqual(["Give at least one option."]);
  });
});

describe("helpers", () => {
  it("freshKey and keyFromLabel", () => {
    expect(freshKey([])).toBe("field");
    expect(freshKey([{ key: "field", type: "text", label: "", required: false }])).toBe("field_2");
    expect(keyFromLabel("Amount (EUR)")).toBe("amount_eur");
    expect(keyFromLabel("2nd reviewer")).toBe("f_2nd_reviewer");
    expect(keyFromLabel("Café")).toBe("cafe");
    expect(keyFromLabel("")).toBe("field");
  });

  it("move", () => {
    expect(move(["a", "b", "c"], 0, 2)).toEqual(["b", "c", "a"]);
    expect(move(["a", "b", "c"], 2, 1)).toEqual(["a", "c", "b"]);
    expect(move(["a"], 0, 1)).toEqual(["a"]);
  });

  it("moveInputKey carries a field's default along a rename and drops it with the field", () => {
    const input = { amount: "${workflow.input.amount}", other: 1 };
    expect(moveInputKey(input, "amount", "total")).toEqual({ total: "${workflow.input.amount}", other: 1 });
    expect(moveInputKey(input, "amount", undefined)).toEqual({ other: 1 });
    expect(moveInputKey({ amount: 1 }, "amount", undefined)).toBeUndefined();
    expect(moveInputKey(input, "missing", "x")).toEqual(input);
    expect(moveInputKey(undefined, "a", "b")).toBeUndefined();
  });

  it("changeFieldType keeps what still applies", () => {
    expect(changeFieldType({ key: "a", type: "text", label: "A", required: true, maxLength: 3, help: "h" }, "email")).toEqual({ key: "a", type: "email", label: "A", required: true, maxLength: 3, help: "h" });
    expect(changeFieldType({ key: "a", type: "text", label: "A", required: false, maxLength: 3 }, "number")).toEqual({ key: "a", type: "number", label: "A", required: false });
    expect(changeFieldType({ key: "a", type: "text", label: "A", required: false }, "select").options).toEqual(["Option 1"]);
  });
});

describe("defaults and keys", () => {
  const number: HumanField = { key: "amount", type: "number", label: "Amount", required: false };
  it("defaultFromText keeps expressions and types literals", () => {
    expect(defaultFromText(number, "${workflow.input.amount}")).toBe("${workflow.input.amount}");
    expect(defaultFromText(number, "42")).toBe(42);
    expect(defaultFromText(number, "4x")).toBe("4x");
    expect(defaultFromText({ ...number, type: "checkbox" }, "true")).toBe(true);
    expect(defaultFromText({ ...number, type: "multiselect" }, '["a"]')).toEqual(["a"]);
    expect(defaultFromText({ ...number, type: "text" }, "42")).toBe("42");
    expect(defaultFromText(number, "")).toBeUndefined();
    expect(defaultToText(42)).toBe("42");
    expect(defaultToText("x")).toBe("x");
    expect(defaultToText(undefined)).toBe("");
  });

  it("keyAfterLabel follows the label until someone chose the key", () => {
    const fields: HumanField[] = [
      { key: "field", type: "text", label: "Field 1", required: false },
      { key: "total", type: "number", label: "Total", required: false },
      { key: "my_key", type: "text", label: "Anything", required: false },
    ];
    expect(keyAfterLabel(fields, 0, "Cost centre")).toBe("cost_centre");
    expect(keyAfterLabel(fields, 0, "Total")).toBe("total_2");
    expect(keyAfterLabel(fields, 1, "Grand total")).toBe("grand_total");
    expect(keyAfterLabel(fields, 2, "Something else")).toBe("my_key");
    expect(keyAfterLabel(fields, 0, "")).toBe("field");
  });
});
