import { describe, expect, it } from "vitest";
import { openSecretValue, SealingKeys, sealedUnderCurrent, sealSecretValue, SecretUnsealError } from "./sealing";

const where = { namespaceId: "0191d6a4-0000-7000-8000-000000000001", name: "API_TOKEN" };

describe("sealing secret values", () => {
  const keys = new SealingKeys("instance-secret-".padEnd(64, "a"));

  it("opens what it sealed, and never holds the plaintext", () => {
    const sealed = sealSecretValue(keys, where, "tok_live_9f8e7d");
    expect(sealed.includes(Buffer.from("tok_live_9f8e7d"))).toBe(false);
    expect(openSecretValue(keys, where, sealed)).toBe("tok_live_9f8e7d");
  });

  it("seals the same value differently each time (a fresh nonce)", () => {
    expect(sealSecretValue(keys, where, "same").equals(sealSecretValue(keys, where, "same"))).toBe(false);
  });

  it("refuses a value moved onto another secret or namespace, or changed by one bit", () => {
    const sealed = sealSecretValue(keys, where, "value");
    expect(() => openSecretValue(keys, { ...where, name: "OTHER" }, sealed)).toThrow(SecretUnsealError);
    expect(() => openSecretValue(keys, { ...where, namespaceId: "0191d6a4-0000-7000-8000-000000000002" }, sealed)).toThrow(SecretUnsealError);
    const flipped = Buffer.from(sealed);
    flipped[flipped.length - 1]! ^= 1;
    expect(() => openSecretValue(keys, where, flipped)).toThrow(/does not open/);
  });

  it("opens values sealed under a previous instance secret while it is listed, and says which are not current", () => {
    const old = new SealingKeys("old-secret-".padEnd(64, "b"));
    const sealed = sealSecretValue(old, where, "kept");
    const rotated = new SealingKeys("new-secret-".padEnd(64, "c"), ["old-secret-".padEnd(64, "b")]);
    expect(openSecretValue(rotated, where, sealed)).toBe("kept");
    expect(sealedUnderCurrent(rotated, sealed)).toBe(false);
    expect(sealedUnderCurrent(rotated, sealSecretValue(rotated, where, "kept"))).toBe(true);
    expect(() => openSecretValue(new SealingKeys("new-secret-".padEnd(64, "c")), where, sealed)).toThrow(/not configured/);
  });
});
