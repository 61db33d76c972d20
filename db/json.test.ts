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

  it("replaces a lone surrogate (jsonb rejects it) with U+FFFD, and keeps pairs", () => {
    const cut = "ok 😀".slice(0, 4); // the high half of the emoji only
    expect(JSON.parse(json({ a: cut, b: "x\udc00y", "k\ud800": 1, c: "😀" }))).toEqual({
      a: "ok \ufffd",
      b: "x\ufffdy",
      "k\ufffd": 1,
      c: "😀",
    });
  });

  it("keeps an escaped backslash followed by the text ud800", () => {
    const value = { path: "C:\\ud800" };
    expect(JSON.parse(json(value))).toEqual(value);
  });
});
