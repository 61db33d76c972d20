import { describe, expect, it } from "vitest";
import { containsPattern } from "./workflow-definitions";

describe("containsPattern", () => {
  it("wraps the search in wildcards", () => {
    expect(containsPattern("order")).toBe("%order%");
  });

  it("escapes LIKE wildcards and the escape character itself", () => {
    expect(containsPattern("50%_off")).toBe("%50\\%\\_off%");
    expect(containsPattern("a\\b")).toBe("%a\\\\b%");
  });
});
