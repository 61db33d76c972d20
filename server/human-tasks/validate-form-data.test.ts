import { describe, expect, it } from "vitest";
import { validateFormData } from "./validate-form-data";

const schema = {
  type: "object",
  required: ["amount", "contact"],
  properties: {
    amount: { type: "number", minimum: 1, maximum: 100 },
    contact: { type: "string", format: "email" },
    site: { type: "string", format: "uri" },
    when: { type: "string", format: "date" },
    code: { type: "string", pattern: "^[A-Z]{3}$" },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, uniqueItems: true },
    "a/b": { type: "boolean" },
  },
};

describe("validateFormData", () => {
  it("accepts valid data", () => {
    expect(validateFormData(schema, { amount: 5, contact: "a@b.co", site: "https://x.io", when: "2030-01-31", code: "ABC", tags: ["a"], "a/b": true })).toEqual([]);
  });

  it("reports every field by JSON pointer, a missing required one on the field itself", () => {
    const errors = validateFormData(schema, { amount: 500, site: "not a uri", when: "31/01/2030", code: "abc", tags: ["c"], "a/b": "yes" });
    expect(errors.map((e) => e.path).sort()).toEqual(["/amount", "/a~1b", "/code", "/contact", "/site", "/tags/0", "/when"]);
    expect(errors.find((e) => e.path === "/contact")?.message).toBe("is required");
  });

  it("reports a schema ajv cannot compile instead of throwing", () => {
    expect(validateFormData({ type: "object", properties: { x: { type: "nonsense" } } }, {})).toEqual([{ path: "", message: expect.stringContaining("cannot be used") as unknown }]);
  });
});
