import { describe, expect, it } from "vitest";
import type { RouteTemplate } from "./route-table";
import { pathParameterNames, routeTableMatcher } from "./route-table";

// The matcher on its own, on a small table; each API's answers for a miss
// (problem+json, Conductor's ErrorResponse) are its dispatcher's tests.

const routes: readonly RouteTemplate[] = [
  { method: "GET", path: "/things/{id}" },
  { method: "DELETE", path: "/things/{id}" },
  { method: "GET", path: "/things/search" },
  { method: "POST", path: "/things/{name}/{version}" },
  { method: "POST", path: "/things/run/{version}" },
];

const strict = routeTableMatcher<RouteTemplate>({ prefix: "/api", label: "test routes", trailingSlash: "not-found" });
const lenient = routeTableMatcher<RouteTemplate>({ prefix: "/api", label: "test routes", trailingSlash: "ignored" });

const matched = (method: string, pathname: string, match = strict) => {
  const m = match(routes, method, pathname);
  return m.kind === "route" ? `${m.route.method} ${m.route.path} ${JSON.stringify(m.params)}` : m;
};

describe("routeTableMatcher", () => {
  it("matches a template and extracts its parameters, decoded", () => {
    expect(matched("GET", "/api/things/a%20b")).toBe('GET /things/{id} {"id":"a b"}');
    expect(matched("POST", "/api/things/flow/2")).toBe('POST /things/{name}/{version} {"name":"flow","version":"2"}');
  });

  it("prefers literal segments over parameters, leftmost first, per method", () => {
    expect(matched("GET", "/api/things/search")).toBe("GET /things/search {}");
    expect(matched("DELETE", "/api/things/search")).toBe('DELETE /things/{id} {"id":"search"}');
    expect(matched("POST", "/api/things/run/3")).toBe('POST /things/run/{version} {"version":"3"}');
  });

  it("tells no route at the path from routes at the path for other methods, listing those in a fixed order", () => {
    expect(matched("GET", "/api/nothing")).toEqual({ kind: "not-found" });
    expect(matched("PUT", "/api/things/x")).toEqual({ kind: "method-not-allowed", allowed: ["GET", "DELETE"] });
  });

  it("finds nothing outside the prefix, at an empty segment, or at a path that does not decode", () => {
    expect(matched("GET", "/other/things/x")).toEqual({ kind: "not-found" });
    expect(matched("GET", "/api")).toEqual({ kind: "not-found" });
    expect(matched("GET", "/api//things/x")).toEqual({ kind: "not-found" });
    expect(matched("GET", "/api/things/%E0%A4%A")).toEqual({ kind: "not-found" });
  });

  it("ignores a trailing slash only when told to", () => {
    expect(matched("GET", "/api/things/x/")).toEqual({ kind: "not-found" });
    expect(matched("GET", "/api/things/x/", lenient)).toBe('GET /things/{id} {"id":"x"}');
    expect(matched("GET", "/api/things/x//", lenient)).toEqual({ kind: "not-found" });
  });

  it("refuses two routes that answer the same requests", () => {
    const twice: readonly RouteTemplate[] = [
      { method: "GET", path: "/runs/{runId}" },
      { method: "GET", path: "/runs/{id}" },
    ];
    expect(() => strict(twice, "GET", "/api/runs/x")).toThrow("Two test routes answer GET /runs/{id}");
  });
});

describe("pathParameterNames", () => {
  it("lists a template's parameters in order", () => {
    expect(pathParameterNames("/ns/{ns}/runs/{runId}/tasks/{ref}")).toEqual(["ns", "runId", "ref"]);
    expect(pathParameterNames("/metadata/taskdefs")).toEqual([]);
  });
});
