import { describe, expect, it } from "vitest";
import { parseSearchQuery } from "./conductor-workflows";

describe("Conductor search queries", () => {
  it("reads IN lists, equality, quoted values and startTime bounds joined by AND", () => {
    expect(parseSearchQuery("workflowType IN (a, b) AND status IN (RUNNING,FAILED) AND correlationId = 'c-1' AND startTime > 1000 AND startTime < 2000")).toEqual({
      ok: true,
      fields: { defNames: ["a", "b"], statuses: ["RUNNING", "FAILED"], correlationIds: ["c-1"], startedFrom: new Date(1001), startedBefore: new Date(2000) },
    });
    expect(parseSearchQuery("")).toEqual({ ok: true, fields: {} });
    expect(parseSearchQuery("*")).toEqual({ ok: true, fields: {} });
    expect(parseSearchQuery("startTime >= 5")).toEqual({ ok: true, fields: { startedFrom: new Date(5) } });
  });

  it("refuses what it cannot answer — OR, unknown fields, unknown statuses — naming each clause", () => {
    const result = parseSearchQuery("status IN (SLEEPING) AND owner = me AND x OR y");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.message)).toEqual([expect.stringContaining("SLEEPING"), expect.stringContaining('"owner"'), expect.stringContaining('"x OR y"')]);
  });

  it("a workflowId that is no UUID matches nothing rather than failing", () => {
    expect(parseSearchQuery("workflowId = nope")).toEqual({ ok: true, fields: { workflowIds: ["00000000-0000-0000-0000-000000000000"] } });
  });
});
