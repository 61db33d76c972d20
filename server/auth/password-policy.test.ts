import { describe, expect, it } from "vitest";
import { checkPasswordStrength } from "./password-policy";

describe("checkPasswordStrength", () => {
  it("accepts a long, ordinary passphrase", () => {
    expect(checkPasswordStrength("tulip-harbour-9-lantern", { email: "ada@example.com" })).toBeNull();
  });

  it.each([
    ["short1!", "at least 12"],
    ["aaaaaaaaaaaaaaaa", "too few different"],
    ["121212121212", "too few different"],
    ["Password1234!", "too common"],
    ["qwertyuiop!!", "too common"],
    ["314159265358979", "only digits"],
    ["x".repeat(300), "at most 256"],
  ])("refuses %j (%s)", (password, reason) => {
    expect(checkPasswordStrength(password)).toContain(reason);
  });

  it("refuses a password built from the email address", () => {
    expect(checkPasswordStrength("ada.lovelace-2024", { email: "Ada.Lovelace@example.com" })).toContain("email");
    expect(checkPasswordStrength("ada.lovelace-2024", { email: "grace@example.com" })).toBeNull();
  });
});
