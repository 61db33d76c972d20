import { describe, expect, it } from "vitest";
import { filtersFromQuery } from "./run-filters-query";

describe("filtersFromQuery", () => {
  it("takes every known status and the first workflow a link names", () => {
    expect(filtersFromQuery({ status: ["FAILED", "TIMED_OUT"], workflow: " orders " })).toEqual({ statuses: ["FAILED", "TIMED_OUT"], workflow: "orders" });
    expect(filtersFromQuery({ status: "RUNNING", workflow: ["a", "b"] })).toEqual({ statuses: ["RUNNING"], workflow: "a" });
  });

  it("ignores unknown statuses, repeats, blanks and other parameters", () => {
    expect(filtersFromQuery({ status: ["failed", "NOPE", "FAILED", "FAILED"], workflow: "  ", search: "input.x:1" })).toEqual({ statuses: ["FAILED"] });
    expect(filtersFromQuery({})).toEqual({});
  });
});
