import { describe, expect, it } from "vitest";
import { EXPIRY_PRESETS, expiryFromPreset, maskedKey, normalizeScopes, ownerLabel } from "./api-key-display";

describe("API key display helpers", () => {
  it("turns an expiry preset into an instant that many days ahead, or null for never", () => {
    const now = new Date("2026-03-01T12:00:00.000Z");
    expect(expiryFromPreset("never", now)).toBeNull();
    expect(expiryFromPreset("7d", now)).toBe("2026-03-08T12:00:00.000Z");
    expect(expiryFromPreset("365d", now)).toBe("2027-03-01T12:00:00.000Z");
    expect(EXPIRY_PRESETS.map((p) => p.id)).toEqual(["never", "7d", "30d", "90d", "365d"]);
  });

  it("shows the owner by email or service-account name, and says when there is none", () => {
    expect(ownerLabel({ type: "user", id: "u", email: "a@x.test" })).toEqual({ label: "a@x.test", kind: "User" });
    expect(ownerLabel({ type: "serviceAccount", id: "s", name: "ci" })).toEqual({ label: "ci", kind: "Service account" });
    expect(ownerLabel(null).label).toBe("No owner");
  });

  it("masks a key to its public prefix", () => {
    expect(maskedKey("0123456789ab")).toBe("nf_0123456789ab_…");
  });

  it("keeps known scopes once, in canonical order", () => {
    expect(normalizeScopes(["admin", "bogus", "worker", "admin"])).toEqual(["worker", "admin"]);
    expect(normalizeScopes([])).toEqual([]);
  });
});
