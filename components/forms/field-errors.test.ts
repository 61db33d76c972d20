import { describe, expect, it } from "vitest";
import { fieldErrorsToErrorSchema, pointerSegments, unansweredErrors, valueAtPointer } from "./field-errors";

describe("pointerSegments", () => {
  it("splits and unescapes a JSON pointer", () => {
    expect(pointerSegments("")).toEqual([]);
    expect(pointerSegments("/amount")).toEqual(["amount"]);
    expect(pointerSegments("/items/0/sku")).toEqual(["items", "0", "sku"]);
    expect(pointerSegments("/a~1b/c~0d")).toEqual(["a/b", "c~d"]);
  });
});

describe("fieldErrorsToErrorSchema", () => {
  it("puts each message under its field, several on one field kept in order", () => {
    expect(
      fieldErrorsToErrorSchema([
        { path: "/amount", message: "must be <= 100" },
        { path: "/amount", message: "must be a multiple of 5" },
        { path: "/address/city", message: "is required" },
        { path: "", message: "the form is incomplete" },
      ]),
    ).toEqual({
      __errors: ["the form is incomplete"],
      amount: { __errors: ["must be <= 100", "must be a multiple of 5"] },
      address: { city: { __errors: ["is required"] } },
    });
  });

  it("is empty for no errors", () => {
    expect(fieldErrorsToErrorSchema([])).toEqual({});
  });
});

describe("unansweredErrors", () => {
  const errors = [
    { path: "/amount", message: "too big" },
    { path: "/note", message: "too short" },
  ];
  it("drops the errors of fields edited since the submission", () => {
    const submitted = { amount: 500, note: "x" };
    expect(unansweredErrors(errors, submitted, { amount: 50, note: "x" })).toEqual([{ path: "/note", message: "too short" }]);
    expect(unansweredErrors(errors, submitted, submitted)).toEqual(errors);
  });
  it("reads nested values", () => {
    expect(valueAtPointer({ a: { b: [1, 2] } }, "/a/b/1")).toBe(2);
    expect(valueAtPointer({ a: 1 }, "/a/b")).toBeUndefined();
  });
});
