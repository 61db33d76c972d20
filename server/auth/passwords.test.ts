import { describe, expect, it } from "vitest";
import { DECOY_PASSWORD_HASH, currentHashParameters, hashParameters, hashPassword, verifyPassword } from "./passwords";

describe("hashPassword / verifyPassword", () => {
  it("round-trips, and a wrong password (even one character off) does not verify", async () => {
    const hash = await hashPassword("correct horse battery staple");
    expect(await verifyPassword("correct horse battery staple", hash)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", hash)).toBe(false);
    expect(await verifyPassword("Correct horse battery staple", hash)).toBe(false);
    expect(await verifyPassword("", hash)).toBe(false);
  });

  it("stores the parameters and a fresh salt in the string, never the password", async () => {
    const [a, b] = await Promise.all([hashPassword("same password here"), hashPassword("same password here")]);
    expect(a).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("same password");
  });

  it("verifies a hash made with other (cheaper) parameters by reading them from the string", async () => {
    // ln=10 is the lowest accepted cost; made here by hand with node:crypto's scrypt.
    const { scryptSync } = await import("node:crypto");
    const salt = Buffer.from("0123456789abcdef");
    const key = scryptSync("legacy password!", salt, 32, { N: 1024, r: 8, p: 1 });
    const hash = `$scrypt$ln=10,r=8,p=1$${salt.toString("base64")}$${key.toString("base64")}`;
    expect(await verifyPassword("legacy password!", hash)).toBe(true);
    expect(await verifyPassword("legacy password?", hash)).toBe(false);
  });

  it("treats a malformed or out-of-bounds hash as a mismatch rather than throwing or obeying it", async () => {
    const good = await hashPassword("some password 1");
    expect(await verifyPassword("some password 1", "")).toBe(false);
    expect(await verifyPassword("some password 1", "plaintext")).toBe(false);
    expect(await verifyPassword("some password 1", good.replace("$scrypt$", "$bcrypt$"))).toBe(false);
    // ln=30 would ask for 128 GiB: refused before scrypt runs.
    expect(hashParameters(good.replace("ln=15", "ln=30"))).toBeNull();
    expect(await verifyPassword("some password 1", good.replace("ln=15", "ln=30"))).toBe(false);
  });

  it("normalises Unicode, so the same password typed on another keyboard still matches", async () => {
    const composed = "caf\u00e9 au lait, s'il vous pla\u00eet";
    const decomposed = composed.normalize("NFD");
    expect(decomposed).not.toBe(composed);
    expect(await verifyPassword(decomposed, await hashPassword(composed))).toBe(true);
  });

  it("has a decoy hash with today's parameters (so it costs what a real one does) that nothing guessable matches", async () => {
    // Well-formed too: a decoy that failed to parse would be refused without scrypt, i.e. fast.
    expect(hashParameters(DECOY_PASSWORD_HASH)).toBe(currentHashParameters());
    expect(await verifyPassword("", DECOY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword("password", DECOY_PASSWORD_HASH)).toBe(false);
  });
});
