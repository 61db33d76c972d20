import { describe, expect, it } from "vitest";
import { checkRunInput, draftsFor, inputFromDrafts, problemsByField, runFields } from "./run-input";

const schema = {
  type: "object",
  properties: {
    customerId: { type: "string", title: "Customer", description: "Who pays" },
    count: { type: "integer", default: 3 },
    ratio: { type: "number" },
    express: { type: "boolean" },
    tier: { enum: ["gold", "silver", 1] },
    address: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    tags: { type: "array", items: { type: "string" } },
    anything: {},
    nickname: { type: ["string", "null"] },
  },
  required: ["customerId", "count"],
};

describe("runFields", () => {
  it("turns each property into a field with its title, description, default and required flag", () => {
    const fields = runFields(schema)!;
    expect(fields.map((f) => [f.key, f.kind])).toEqual([
      ["customerId", "string"],
      ["count", "integer"],
      ["ratio", "number"],
      ["express", "boolean"],
      ["tier", "enum"],
      ["address", "json"],
      ["tags", "json"],
      ["anything", "json"],
      ["nickname", "string"],
    ]);
    expect(fields[0]).toMatchObject({ title: "Customer", description: "Who pays", required: true });
    expect(fields[1]).toMatchObject({ title: "count", defaultValue: 3, required: true });
    expect(fields[5]).toMatchObject({ jsonType: "object" });
    expect(fields[6]).toMatchObject({ jsonType: "array" });
  });

  it("is null without properties: raw JSON only", () => {
    expect(runFields(undefined)).toBeNull();
    expect(runFields({})).toBeNull();
    expect(runFields({ type: "object", properties: {} })).toBeNull();
    expect(runFields({ oneOf: [{ type: "object" }] })).toBeNull();
  });
});

describe("drafts and input", () => {
  const fields = runFields(schema)!;

  it("starts from the defaults", () => {
    expect(draftsFor(fields)).toMatchObject({ customerId: "", count: "3", express: undefined, tier: "" });
  });

  it("reads the drafts into an input, leaving empty optional fields out", () => {
    const drafts = { ...draftsFor(fields), customerId: "c-1", ratio: "0.5", express: true, tier: "1", address: '{"city": "Oslo"}', tags: '["a"]' };
    expect(inputFromDrafts(fields, drafts)).toEqual({
      input: { customerId: "c-1", count: 3, ratio: 0.5, express: true, tier: 1, address: { city: "Oslo" }, tags: ["a"] },
      errors: {},
    });
  });

  it("names each field whose draft is not a value", () => {
    const drafts = { ...draftsFor(fields), count: "2.5", ratio: "abc", address: "[1]", tags: "{", tier: "bronze" };
    const { errors } = inputFromDrafts(fields, drafts);
    expect(Object.keys(errors).sort()).toEqual(["address", "count", "customerId", "ratio", "tags", "tier"]);
    expect(errors.customerId).toBe("Customer is required");
    expect(errors.count).toContain("whole number");
  });

  it("round-trips an input through the drafts (switching from raw JSON to the form)", () => {
    const input = { customerId: "x", count: 7, express: false, tier: "gold", address: { city: "Rome" } };
    expect(inputFromDrafts(fields, draftsFor(fields, input, false)).input).toEqual(input);
  });
});

describe("checkRunInput", () => {
  it("refuses what the schema refuses, with paths", () => {
    const problems = checkRunInput(schema, { count: 1, address: {} });
    expect(problems.map((p) => p.path.join("."))).toEqual(expect.arrayContaining(["customerId", "address.city"]));
    expect(checkRunInput(schema, { customerId: "a", count: 1 })).toEqual([]);
    expect(checkRunInput(undefined, { anything: 1 })).toEqual([]);
  });

  it("reports a schema it cannot apply instead of throwing", () => {
    const problems = checkRunInput({ type: "object", properties: { a: { $ref: "#/nowhere" } } }, {});
    expect(problems.length).toBeGreaterThanOrEqual(0);
  });

  it("splits problems by field", () => {
    const { byField, other } = problemsByField(
      [
        { path: ["address", "city"], message: "Required" },
        { path: ["customerId"], message: "Required" },
        { path: ["extra"], message: "Unknown" },
        { path: [], message: "Top" },
      ],
      runFields(schema),
    );
    expect(byField).toEqual({ address: ["city: Required"], customerId: ["Required"] });
    expect(other).toEqual(["extra: Unknown", "Top"]);
  });
});
