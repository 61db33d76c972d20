import { describe, expect, it } from "vitest";
import { config } from "./proxy";

// The sign-in redirect is for pages only: an API client (node-flow's REST, a
// Conductor worker) must get its route's own 401, never a redirect to HTML.
// Next anchors the matcher at both ends, as this does.
const matches = (pathname: string) => config.matcher.some((m) => new RegExp(`^${m}$`).test(pathname));

describe("the proxy's matcher", () => {
  it("covers pages, not API routes", () => {
    expect(matches("/workflows")).toBe(true);
    expect(matches("/settings/api-keys")).toBe(true);
    expect(matches("/conductor")).toBe(true);
    expect(matches("/api/v1/ns/default/runs")).toBe(false);
    expect(matches("/conductor/api/tasks/poll/batch/encode")).toBe(false);
    expect(matches("/conductor/api/token")).toBe(false);
    expect(matches("/metrics")).toBe(false);
  });
});
