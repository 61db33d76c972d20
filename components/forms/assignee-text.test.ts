import { describe, expect, it } from "vitest";
import { formatAssignee, parseAssignee } from "./assignee-text";

describe("assignee text", () => {
  it("parses every kind and formats it back", () => {
    for (const text of ["user:ada@example.com", "group:Finance team", "role:operator", "user:${workflow.input.manager}", "${workflow.input.who}"]) {
      const { kind, value } = parseAssignee(text);
      expect(formatAssignee(kind, value)).toBe(text);
    }
    expect(parseAssignee(undefined)).toEqual({ kind: "anyone", value: "" });
    expect(parseAssignee("anyone")).toEqual({ kind: "anyone", value: "" });
    expect(parseAssignee("group:ops")).toEqual({ kind: "group", value: "ops" });
    expect(formatAssignee("anyone", "x")).toBeUndefined();
    expect(formatAssignee("expression", "")).toBeUndefined();
  });
});
