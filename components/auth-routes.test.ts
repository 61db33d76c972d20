import { describe, expect, it } from "vitest";
import { isAuthPage, safeNextPath, signInPath } from "./auth-routes";

describe("safeNextPath", () => {
  it("keeps a path on this origin, with its query and hash", () => {
    expect(safeNextPath("/settings/users")).toBe("/settings/users");
    expect(safeNextPath("/settings/api-keys?ns=billing#keys")).toBe("/settings/api-keys?ns=billing#keys");
  });

  it("refuses anything a browser would take to another host", () => {
    for (const raw of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "/\t/evil.example", "javascript:alert(1)", "evil"]) {
      expect(safeNextPath(raw)).toBe("/workflows");
    }
  });

  it("never sends a signed-in user back to a sign-in page", () => {
    expect(safeNextPath("/sign-in?next=/sign-in")).toBe("/workflows");
    expect(safeNextPath("/setup")).toBe("/workflows");
    expect(safeNextPath("/sign-in/")).toBe("/workflows");
  });

  it("falls back to Workflows when there is nothing", () => {
    expect(safeNextPath(null)).toBe("/workflows");
    expect(safeNextPath("")).toBe("/workflows");
  });
});

describe("signInPath", () => {
  it("carries the requested page as `next`", () => {
    expect(signInPath("/settings/users?x=1")).toBe("/sign-in?next=%2Fsettings%2Fusers%3Fx%3D1");
  });

  it("says nothing for the landing page", () => {
    expect(signInPath("/")).toBe("/sign-in");
    expect(signInPath("/workflows")).toBe("/sign-in");
  });
});

describe("isAuthPage", () => {
  it("knows the two pages an anonymous visitor may see", () => {
    expect(isAuthPage("/sign-in")).toBe(true);
    expect(isAuthPage("/sign-in?next=%2F")).toBe(true);
    expect(isAuthPage("/setup/")).toBe(true);
    expect(isAuthPage("/settings")).toBe(false);
    expect(isAuthPage("/sign-in-help")).toBe(false);
  });
});
