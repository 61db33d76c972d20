import { describe, expect, it } from "vitest";
import { userInitials } from "./user-initials";

describe("userInitials", () => {
  it("takes the first and last word of a display name", () => {
    expect(userInitials({ displayName: "Ada King Lovelace", email: "ada@example.com" })).toBe("AL");
  });

  it("falls back to the start of one word, then of the email", () => {
    expect(userInitials({ displayName: "ada", email: "x@example.com" })).toBe("AD");
    expect(userInitials({ displayName: null, email: "grace@example.com" })).toBe("GR");
    expect(userInitials({ displayName: "  ", email: "g@example.com" })).toBe("G");
  });
});
