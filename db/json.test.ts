import { describe, expect, it } from "vitest";
import { json } from "./json";

describe("json()", () => {
  it("serialises plain values", () => {
    expect(json({ a: 1, b: [true, null, "x"] })).toBe('{"a":1,"b":[true,null,"x"]}');
    expect(json(undefined)).toBe("null");
  });

  it("strips NUL from strings and keys", () => {
    expect(JSON.parse(json({ "k\u0000ey": "a\u0000b\u0000" }))).toEqual({ key: "ab" });
  });

  it("keeps an escaped backslash followed by the text u0000", () => {
    const value = { path: "C:\\u0000dir" };
    expect(JSON.parse(json(value))).toEqual(value);
  });

  it("strips a NUL that follows a literal backslash", () => {
    expect(JSON.parse(json({ v: "\\\u0000" }))).toEqual({ v: "\\" });
  });
});
