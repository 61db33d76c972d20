import { describe, expect, it } from "vitest";
import { generatePassword } from "./generate-password";

describe("generatePassword", () => {
  it("is 20 unambiguous characters by default", () => {
    const password = generatePassword();
    expect(password).toHaveLength(20);
    expect(password).toMatch(/^[a-km-zA-HJ-NP-Z2-9]+$/);
  });

  it("skips the bytes that would bias the alphabet", () => {
    // 224 and above are rejected (224 = 4 × 56); 0 and 57 map to the first two letters.
    let call = 0;
    const random = (bytes: Uint8Array) => (call++ === 0 ? bytes.fill(250) : bytes.map((_, i) => (i % 2 === 0 ? 0 : 57)));
    expect(generatePassword(4, random)).toBe("abab");
  });

  it("differs between calls", () => {
    expect(generatePassword()).not.toBe(generatePassword());
  });
});
