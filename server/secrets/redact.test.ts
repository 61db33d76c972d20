import { describe, expect, it } from "vitest";
import { redactSecrets, redactText } from "./redact";

describe("redactSecrets", () => {
  const secret = 'p@ss "word"/1';

  it("replaces a value wherever it appears in a JSON value, keys included, and leaves the input alone", () => {
    const output = { response: { headers: { "x-echo": [`Bearer ${secret}`] }, body: { [secret]: secret, list: [1, secret, null, { deep: `a${secret}b` }] } } };
    const copy = structuredClone(output);
    expect(redactSecrets(output, [secret])).toEqual({ response: { headers: { "x-echo": ["Bearer ***"] }, body: { "***": "***", list: [1, "***", null, { deep: "a***b" }] } } });
    expect(output).toEqual(copy);
  });

  it("finds it JSON-escaped and URL-encoded, as an echoed body or an error quoting a URL would hold it", () => {
    expect(redactText(`body was {"t":${JSON.stringify(secret)}}`, [secret])).toBe('body was {"t":"***"}');
    expect(redactText(`GET https://x.example/?key=${encodeURIComponent(secret)} failed`, [secret])).toBe("GET https://x.example/?key=*** failed");
  });

  it("replaces the longer of two overlapping values whole", () => {
    expect(redactText("abcdef", ["abc", "abcdef"])).toBe("***");
  });

  it("returns the value itself when there is nothing to redact", () => {
    const value = { a: "x" };
    expect(redactSecrets(value, [])).toBe(value);
    expect(redactSecrets(value, [""])).toBe(value);
    expect(redactSecrets("plain", ["zzz"])).toBe("plain");
  });
});
