import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { CONDUCTOR_ROUTES } from "../conductor/conductor-routes";
import type { AnyConductorRoute } from "../conductor/define-conductor-route";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { DEFAULT_MAX_BODY_BYTES } from "../rest/dispatch";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { createApiFixture, snapshotNamespace } from "./testing/api-fixtures";
import type { ApiFixture } from "./testing/api-fixtures";
import { conductorExample } from "./testing/route-examples";
import { badInputCases, hostileStringCases, inLanes, statusTally } from "./testing/bad-input";
import type { HttpCase, Target } from "./testing/bad-input";
import { APPEND_ONLY_TABLES, tableCounts } from "./testing/table-counts";

/**
 * The bad-input corpus over every route of /conductor/api
 * (server/conductor/conductor-routes.ts), over real HTTP, with a token of an
 * admin key from POST /token: no 5xx, every refusal Conductor's error body
 * with a message (and, for a field, `validationErrors[].path` naming it), and
 * the bad input as a whole changes no row. Then the hostile strings.
 */

const t = useTestDatabase();
let h: ConductorHarness;
let scripts: QuickJsScriptEvaluator;
let fx: ApiFixture;
let token: string;
const OVERSIZE = Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x20);

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  h = await startConductorHarness(t.db, t.url);
  fx = await createApiFixture({ db: t.db, blobs: h.deps.blobs, scripts }, "cdcorpus");
  const answer = await h.call<{ token: string }>("POST", "/token", { body: keyPair(fx.adminKey) });
  token = answer.body.token;
});
afterAll(async () => {
  await h?.close();
  await scripts?.close();
});


interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

async function send(route: AnyConductorRoute, c: HttpCase): Promise<Answer> {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => c.params[name] ?? "");
  const headers: Record<string, string> = { "x-authorization": token, ...c.headers };
  if (c.body !== undefined) headers["content-type"] = c.body.contentType ?? "application/json";
  const body = (c.body === undefined ? undefined : c.body.oversize === true ? OVERSIZE : (c.body.bytes ?? c.body.text)) as BodyInit | undefined;
  const response = await fetch(`${h.baseUrl}${path}${c.query === "" ? "" : `?${c.query}`}`, { method: route.method, headers, body });
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() };
}

interface ErrorBody {
  message?: unknown;
  validationErrors?: { path: string; message: string }[];
}

/** Conductor's dotted path of a target (`body.tasks[0].name`; path parameters are under `path`), and the same without its root, as a handler's own checks name list items (`[0].name`). */
function dottedPaths(target: Target): string[] {
  const render = (root: string) => target.path.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? key : `${out}.${key}`), root);
  return [render(target.location === "params" ? "path" : target.location), render("")].filter((p) => p !== "");
}

function fault(c: HttpCase, answer: Answer): string | null {
  const shown = answer.text.slice(0, 300);
  if (answer.status >= 500) return `${answer.status}: ${shown}`;
  let error: ErrorBody = {};
  if (answer.status >= 400) {
    if (answer.contentType?.startsWith("application/json") !== true) return `${answer.status} answered as ${answer.contentType}: ${shown}`;
    error = JSON.parse(answer.text) as ErrorBody;
    if (typeof error.message !== "string" || error.message === "") return `${answer.status} without a message: ${shown}`;
  }
  const expected = c.expect;
  if (expected === "safe") return null;
  if (expected.refused === "4xx") return answer.status >= 400 && answer.status < 500 ? null : `expected a refusal, got ${answer.status}: ${shown}`;
  if (answer.status !== expected.refused) return `expected ${expected.refused}, got ${answer.status}: ${shown}`;
  if (expected.names !== undefined) {
    const wanted = dottedPaths(expected.names);
    // The body as a whole is named by any path in it, a list's items' too (`[0].name`).
    const whole = expected.names.location === "body" && expected.names.path.length === 0;
    const named = (error.validationErrors ?? []).some((e) => (whole && e.path.startsWith("[")) || wanted.some((w) => e.path === w || e.path.startsWith(`${w}.`) || e.path.startsWith(`${w}[`)));
    if (!named) return `does not name ${wanted.join(" or ")}: ${shown}`;
  }
  if (expected.detail !== undefined && !expected.detail.test(String(error.message))) return `the message does not match ${String(expected.detail)}: ${shown}`;
  return null;
}

async function runCases(route: AnyConductorRoute, cases: readonly HttpCase[]): Promise<{ faults: string[]; statuses: number[] }> {
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

const routes = CONDUCTOR_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const);
const summary: string[] = [];

describe("bad input to every Conductor route", () => {
  let before: unknown;
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    before = await snapshotNamespace(t.db, fx.namespace.id);
    beforeCounts = await tableCounts(t.db);
  });
  afterAll(() => {
    console.log(`Conductor bad-input corpus, ${CONDUCTOR_ROUTES.length} routes:\n${summary.join("\n")}`);
  });

  it.each(routes)("%s: no 5xx, every refusal an error naming the field", async (label, route) => {
    const { cases, skipped } = badInputCases(route, conductorExample(route, fx), { maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    const { faults, statuses } = await runCases(route, cases);
    summary.push(`  ${label}: ${cases.length} cases (${skipped} valid ones skipped) → ${statusTally(statuses)}`);
    expect(faults).toEqual([]);
  });

  it("wrote nothing: every row of the namespace and every table's count as before", async () => {
    expect(await snapshotNamespace(t.db, fx.namespace.id)).toEqual(before);
    expect(await tableCounts(t.db)).toEqual(beforeCounts);
  });
});

describe("hostile strings in every string a Conductor route takes", () => {
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    beforeCounts = await tableCounts(t.db);
  });

  it.each(routes)("%s: no 5xx", async (_label, route) => {
    const { faults } = await runCases(route, hostileStringCases(route, conductorExample(route, fx), { maxBodyBytes: DEFAULT_MAX_BODY_BYTES }));
    expect(faults).toEqual([]);
  });

  it("left every append-only table with at least the rows it had", async () => {
    const after = await tableCounts(t.db);
    for (const table of APPEND_ONLY_TABLES) expect(after[table], table).toBeGreaterThanOrEqual(beforeCounts[table]!);
  });
});
