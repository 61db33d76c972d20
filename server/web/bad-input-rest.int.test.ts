import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import type { AnyRoute } from "../rest/define-route";
import { DEFAULT_MAX_BODY_BYTES } from "../rest/dispatch";
import { ROUTES } from "../rest/routes";
import { startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness } from "../rest/testing/rest-fixtures";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { createApiFixture, snapshotNamespace } from "./testing/api-fixtures";
import type { ApiFixture } from "./testing/api-fixtures";
import { restExample } from "./testing/route-examples";
import { badInputCases, hostileStringCases, inLanes, statusTally, targetPointer } from "./testing/bad-input";
import type { HttpCase } from "./testing/bad-input";
import { APPEND_ONLY_TABLES, tableCounts } from "./testing/table-counts";

/**
 * The bad-input corpus over every route of /api/v1 (server/rest/routes.ts),
 * over real HTTP, with an admin key of the namespace the routes are aimed
 * at: each route gets every case server/web/testing/bad-input.ts generates
 * from its schemas. No answer may be a 5xx; every refusal is a problem whose
 * `errors[].pointer` names the offending value; and the bad input as a whole
 * changes no row. Then the hostile strings, which are valid requests: no 5xx,
 * and every table still holds its rows.
 */

const t = useTestDatabase();
let harness: RestHarness;
let scripts: QuickJsScriptEvaluator;
let fx: ApiFixture;
const OVERSIZE = Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x20);

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  harness = await startRestHarness(t.db, t.url);
  fx = await createApiFixture({ db: t.db, blobs: harness.blobs, scripts }, "corpus");
});
afterAll(async () => {
  await harness?.close();
  await scripts?.close();
});


interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function send(route: AnyRoute, c: HttpCase): Promise<Answer> {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => c.params[name] ?? "");
  const headers: Record<string, string> = { authorization: `Bearer ${fx.adminKey}`, ...c.headers };
  if (c.body !== undefined) headers["content-type"] = c.body.contentType ?? "application/json";
  const body = (c.body === undefined ? undefined : c.body.oversize === true ? OVERSIZE : (c.body.bytes ?? c.body.text)) as BodyInit | undefined;
  const response = await fetch(`${harness.server.baseUrl}${path}${c.query === "" ? "" : `?${c.query}`}`, { method: route.method, headers, body });
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() };
}

interface ProblemBody {
  detail?: unknown;
  errors?: { pointer: string; message: string }[];
}

/** What is wrong with the answer to a case; null when nothing is. */
function fault(c: HttpCase, answer: Answer): string | null {
  const shown = answer.text.slice(0, 300);
  if (answer.status >= 500) return `${answer.status}: ${shown}`;
  let problem: ProblemBody = {};
  if (answer.status >= 400) {
    if (answer.contentType !== "application/problem+json") return `${answer.status} answered as ${answer.contentType}: ${shown}`;
    problem = JSON.parse(answer.text) as ProblemBody;
    if (typeof problem.detail !== "string" || problem.detail === "") return `${answer.status} without a detail: ${shown}`;
  }
  const expected = c.expect;
  if (expected === "safe") return null;
  if (expected.refused === "4xx") return answer.status >= 400 && answer.status < 500 ? null : `expected a refusal, got ${answer.status}: ${shown}`;
  if (answer.status !== expected.refused) return `expected ${expected.refused}, got ${answer.status}: ${shown}`;
  if (expected.names !== undefined) {
    const pointer = targetPointer(expected.names);
    if (!(problem.errors ?? []).some((e) => e.pointer === pointer || e.pointer.startsWith(`${pointer}/`))) return `does not name ${pointer}: ${shown}`;
  }
  if (expected.detail !== undefined && !expected.detail.test(String(problem.detail))) return `the detail does not match ${String(expected.detail)}: ${shown}`;
  return null;
}

/** Sends the cases four at a time; returns the faults and a tally of the statuses. */
async function runCases(route: AnyRoute, cases: readonly HttpCase[]): Promise<{ faults: string[]; statuses: number[] }> {
  const faults: string[] = [];
  const statuses: number[] = [];
  await inLanes(cases, 4, async (c) => {
    const answer = await send(route, c);
    statuses.push(answer.status);
    const found = fault(c, answer);
    if (found !== null) faults.push(`${c.label} → ${found}`);
  });
  return { faults, statuses };
}

const routes = ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const);
const summary: string[] = [];

describe("bad input to every REST route", () => {
  let before: unknown;
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    before = await snapshotNamespace(t.db, fx.namespace.id);
    beforeCounts = await tableCounts(t.db);
  });
  afterAll(() => {
    console.log(`REST bad-input corpus, ${ROUTES.length} routes:\n${summary.join("\n")}`);
  });

  it.each(routes)("%s: no 5xx, every refusal a problem naming the field", async (label, route) => {
    const { cases, skipped } = badInputCases(route, restExample(route, fx), { namespace: fx.namespace.name, maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    const { faults, statuses } = await runCases(route, cases);
    summary.push(`  ${label}: ${cases.length} cases (${skipped} valid ones skipped) → ${statusTally(statuses)}`);
    expect(faults).toEqual([]);
  });

  it("refuses a chunked body over the limit while reading it (413), with no Content-Length to go by", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > DEFAULT_MAX_BODY_BYTES) controller.close();
        else {
          sent += chunk.length;
          controller.enqueue(chunk);
        }
      },
    });
    const response = await fetch(`${harness.server.baseUrl}/ns/${fx.namespace.name}/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${fx.adminKey}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
  });

  it("wrote nothing: every row of the namespace and every table's count as before", async () => {
    expect(await snapshotNamespace(t.db, fx.namespace.id)).toEqual(before);
    expect(await tableCounts(t.db)).toEqual(beforeCounts);
  });
});

describe("hostile strings in every string a REST route takes", () => {
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    beforeCounts = await tableCounts(t.db);
  });

  it.each(routes)("%s: no 5xx", async (_label, route) => {
    const { faults } = await runCases(route, hostileStringCases(route, restExample(route, fx), { namespace: fx.namespace.name, maxBodyBytes: DEFAULT_MAX_BODY_BYTES }));
    expect(faults).toEqual([]);
  });

  it("left every append-only table with at least the rows it had (no statement ran that the request did not mean)", async () => {
    const after = await tableCounts(t.db);
    for (const table of APPEND_ONLY_TABLES) expect(after[table], table).toBeGreaterThanOrEqual(beforeCounts[table]!);
  });
});
