import { describe, expect, it } from "vitest";
import { NAV_ITEMS, isActivePath } from "./nav-items";

describe("isActivePath", () => {
  it("matches the section and its sub-pages", () => {
    expect(isActivePath("/workflows", "/workflows")).toBe(true);
    expect(isActivePath("/workflows/", "/workflows")).toBe(true);
    expect(isActivePath("/workflows/order-fulfilment/3", "/workflows")).toBe(true);
  });

  it("does not match a sibling that shares a prefix", () => {
    expect(isActivePath("/workflows-archive", "/workflows")).toBe(false);
    expect(isActivePath("/inbox", "/workflows")).toBe(false);
  });

  it("lists the five sections in order", () => {
    expect(NAV_ITEMS.map((i) => i.label)).toEqual(["Workflows", "Executions", "Dashboard", "Inbox", "Settings"]);
  });
});
