import { describe, expect, it } from "vitest";
import { estimatePasswordStrength } from "./password-strength";

describe("estimatePasswordStrength", () => {
  it("says how many characters are missing below the minimum", () => {
    expect(estimatePasswordStrength("short", 12)).toEqual({ score: 0, label: "7 more characters needed", color: "danger" });
    expect(estimatePasswordStrength("elevenchars", 12).label).toBe("1 more character needed");
  });

  it("flags a long password made of too few characters", () => {
    expect(estimatePasswordStrength("abababababababab", 12).label).toBe("Too repetitive");
  });

  it("rates length first, variety second", () => {
    expect(estimatePasswordStrength("plainlowercase", 12).score).toBe(1);
    expect(estimatePasswordStrength("plainlowercasewords", 12).score).toBe(2);
    expect(estimatePasswordStrength("a much longer pass phrase", 12).score).toBe(3);
    expect(estimatePasswordStrength("Correct-Horse-Battery-9", 12).score).toBe(4);
  });
});
