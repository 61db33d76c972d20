import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, parseApiKey, parseBearer } from "./api-keys";

describe("API key format", () => {
  it("is nf_<12 hex>_<43 base64url> with 32 bytes of secret, and parses back to its prefix", () => {
    const { prefix, key } = generateApiKey();
    expect(prefix).toMatch(/^[0-9a-f]{12}$/);
    expect(key).toMatch(/^nf_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`nf_${prefix}_`)).toBe(true);
    expect(Buffer.from(key.slice(16), "base64url")).toHaveLength(32);
    expect(parseApiKey(key)).toEqual({ prefix });
  });

  it("draws a different prefix and secret each time", () => {
    const keys = Array.from({ length: 50 }, () => generateApiKey());
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(50);
    expect(new Set(keys.map((k) => k.key.slice(16))).size).toBe(50);
  });

  it("refuses a prefix that is not 12 lowercase hex characters", () => {
    expect(() => generateApiKey("ABCDEF012345")).toThrow(/prefix/);
    expect(() => generateApiKey("abc")).toThrow(/prefix/);
  });

  it("parses nothing but a well-formed key", () => {
    const { key } = generateApiKey();
    for (const bad of ["", "nf_", key.slice(0, -1), `${key}x`, key.replace("nf_", "NF_"), ` ${key}`, key.replace(/_/, "-")]) {
      expect(parseApiKey(bad), bad).toBeNull();
    }
  });

  it("hashes with SHA-256 under a scheme tag, never echoing the key", () => {
    const { key } = generateApiKey();
    const hash = hashApiKey(key);
    expect(hash).toBe(`sha256:${createHash("sha256").update(key).digest("hex")}`);
    expect(hash).not.toContain(key.slice(16));
  });
});

describe("parseBearer", () => {
  it("takes the token of a Bearer header, scheme case-insensitive", () => {
    expect(parseBearer("Bearer nf_abc_def")).toBe("nf_abc_def");
    expect(parseBearer("bearer   tok  ")).toBe("tok");
  });

  it("refuses an absent header, another scheme, an empty or spaced token", () => {
    for (const header of [null, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a b", "Token abc", "Bearerabc"]) {
      expect(parseBearer(header), String(header)).toBeNull();
    }
  });
});
