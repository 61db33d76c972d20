import { describe, expect, it } from "vitest";
import { CONDUCTOR_ROUTES } from "./conductor-routes";
import { resolveConductorRoute } from "./dispatch-conductor-request";

const resolve = (method: string, path: string) => {
  const r = resolveConductorRoute(CONDUCTOR_ROUTES, method, `/conductor/api${path}`);
  return r.kind === "route" ? `${r.route.method} ${r.route.path} ${JSON.stringify(r.params)}` : r.error.status;
};

describe("Conductor route resolution", () => {
  it("literal segments beat parameters", () => {
    expect(resolve("GET", "/workflow/search")).toBe("GET /workflow/search {}");
    expect(resolve("GET", "/workflow/abc")).toBe('GET /workflow/{workflowId} {"workflowId":"abc"}');
    expect(resolve("POST", "/tasks/update-v2")).toBe("POST /tasks/update-v2 {}");
    expect(resolve("GET", "/tasks/queue/sizes")).toBe("GET /tasks/queue/sizes {}");
    expect(resolve("GET", "/tasks/poll/batch/my_task")).toBe('GET /tasks/poll/batch/{taskType} {"taskType":"my_task"}');
    expect(resolve("POST", "/workflow/execute/flow/2")).toBe('POST /workflow/execute/{name}/{version} {"name":"flow","version":"2"}');
  });

  it("unknown paths are 404, a known path with the wrong method 405; a trailing slash is tolerated, path segments are decoded", () => {
    expect(resolve("GET", "/nothing")).toBe(404);
    expect(resolve("PATCH", "/workflow")).toBe(405);
    expect(resolve("GET", "/metadata/taskdefs/")).toBe("GET /metadata/taskdefs {}");
    expect(resolve("GET", "/metadata/workflow/a%20b")).toBe('GET /metadata/workflow/{name} {"name":"a b"}');
    expect(resolve("GET", "/metadata//workflow")).toBe(404);
    expect(resolveConductorRoute(CONDUCTOR_ROUTES, "GET", "/api/v1/x").kind).toBe("none");
  });
});
