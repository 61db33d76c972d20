import { describe, expect, it } from "vitest";
import { mintConductorToken, verifyConductorToken } from "./conductor-token";

const SECRET = "a".repeat(64);
const KEY = { apiKeyId: "0191d6a4-0000-7000-8000-0000000000aa", prefix: "0123456789ab" };
const NOW = Date.UTC(2026, 0, 1);

describe("Conductor tokens", () => {
  it("a minted token verifies until its lifetime ends, then is EXPIRED_TOKEN", () => {
    const token = mintConductorToken(SECRET, KEY, NOW, 60);
    expect(verifyConductorToken(SECRET, token, NOW + 59_000)).toEqual({ ok: true, claims: { ...KEY, expiresAt: NOW / 1000 + 60 } });
    expect(verifyConductorToken(SECRET, token, NOW + 60_000)).toEqual({ ok: false, error: "EXPIRED_TOKEN" });
  });

  it("is a JWT whose claims name the key, never its secret", () => {
    const [header, payload] = mintConductorToken(SECRET, KEY, NOW).split(".");
    expect(JSON.parse(Buffer.from(header!, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    expect(JSON.parse(Buffer.from(payload!, "base64url").toString())).toMatchObject({ sub: KEY.apiKeyId, kid: KEY.prefix, iat: NOW / 1000, exp: NOW / 1000 + 3600 });
  });

  it("another secret's token, a tampered payload and garbage are INVALID_TOKEN — even when also expired", () => {
    const token = mintConductorToken(SECRET, KEY, NOW);
    const [header, , signature] = token.split(".");
    const forgedPayload = Buffer.from(JSON.stringify({ iss: "node-flow/conductor", sub: "other", kid: KEY.prefix, iat: 0, exp: 9e9 })).toString("base64url");
    for (const bad of [mintConductorToken("b".repeat(64), KEY, NOW), `${header}.${forgedPayload}.${signature}`, "garbage", "a.b.c", ""]) {
      expect(verifyConductorToken(SECRET, bad, NOW)).toEqual({ ok: false, error: "INVALID_TOKEN" });
    }
    expect(verifyConductorToken(SECRET, mintConductorToken("b".repeat(64), KEY, NOW - 1e8, 1), NOW)).toEqual({ ok: false, error: "INVALID_TOKEN" });
  });
});
