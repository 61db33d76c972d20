import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { CONDUCTOR_ROUTES } from "../conductor/conductor-routes";
import type { AnyConductorRoute } from "../conductor/define-conductor-route";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import type { AnyRoute } from "../rest/define-route";
import { ROUTES } from "../rest/routes";
import { startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness } from "../rest/testing/rest-fixtures";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { createApiFixture, snapshotNamespace } from "./testing/api-fixtures";
import type { ApiFixture } from "./testing/api-fixtures";
import { serialize } from "./testing/bad-input";
import type { RouteExample } from "./testing/bad-input";
import { conductorExample, restExample } from "./testing/route-examples";

/**
 * The cross-namespace matrix: every REST and Conductor route, called with an
 * admin key of the intruder's namespace and aimed at the victim's rows (its
 * namespace in the path, its run, task, human-task ids and names), reads
 * nothing of the victim's and changes nothing of it. A route aimed at the
 * victim's namespace answers 404, as for a namespace that does not exist; a
 * route aimed at the intruder's own namespace with the victim's ids finds
 * nothing. No answer carries the victim's marker (written into its inputs,
 * outputs, descriptions and titles) or, in a success, any of its ids; and
 * every row of the victim's namespace is as it was. (tRPC's matrix is
 * server/trpc/namespace-isolation.int.test.ts.)
 */

const t = useTestDatabase();
let rest: RestHarness;
let conductor: ConductorHarness;
let scripts: QuickJsScriptEvaluator;
let victim: ApiFixture;
let intruder: ApiFixture;
let intruderToken: string;
let before: unknown;

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  rest = await startRestHarness(t.db, t.url);
  conductor = await startConductorHarness(t.db, t.url);
  victim = await createApiFixture({ db: t.db, blobs: rest.blobs, scripts }, "victim");
  intruder = await createApiFixture({ db: t.db, blobs: rest.blobs, scripts }, "intruder");
  intruderToken = (await conductor.call<{ token: string }>("POST", "/token", { body: keyPair(intruder.adminKey) })).body.token;
  before = await snapshotNamespace(t.db, victim.namespace.id);
});
afterAll(async () => {
  await rest?.close();
  await conductor?.close();
  await scripts?.close();
});

/** The victim's ids: a success that holds one of them leaked it. */
function victimIds(): string[] {
  const v = victim;
  return [v.simpleRun, v.simpleTaskId, v.waitRun, v.waitTaskId, v.humanRun, v.humanTaskExecutionId, v.humanTaskId, v.failedRun, v.failedTaskId];
}

interface Answer {
  status: number;
  text: string;
}

function leak(answer: Answer): string | null {
  const shown = `${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status >= 500) return shown;
  if (answer.text.includes(victim.marker)) return `holds the victim's marker — ${shown}`;
  if (answer.status < 300) for (const id of victimIds()) if (answer.text.includes(id)) return `a success holding the victim's id ${id} — ${shown}`;
  return null;
}

function target(path: string, example: RouteExample, ns: string): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(name === "ns" ? ns : (example.params?.[name] ?? "x")));
  const query = new URLSearchParams(example.query ?? {}).toString();
  return query === "" ? filled : `${filled}?${query}`;
}

function bodyOf(method: string, example: RouteExample, textBody = false): { body?: string; contentType?: string } {
  if (method === "GET" || example.body === undefined) return {};
  return textBody ? { body: typeof example.body === "string" ? example.body : JSON.stringify(example.body), contentType: "text/plain" } : { body: serialize(example.body), contentType: "application/json" };
}

async function sendRest(route: AnyRoute, ns: string): Promise<Answer> {
  const example = restExample(route, victim);
  const { body, contentType } = bodyOf(route.method, example);
  const headers: Record<string, string> = { authorization: `Bearer ${intruder.adminKey}`, ...example.headers };
  if (contentType !== undefined) headers["content-type"] = contentType;
  const response = await fetch(`${rest.server.baseUrl}${target(route.path, example, ns)}`, { method: route.method, headers, body });
  return { status: response.status, text: await response.text() };
}

async function sendConductor(route: AnyConductorRoute): Promise<Answer> {
  const example = conductorExample(route, victim);
  const { body, contentType } = bodyOf(route.method, example, route.textBody === true);
  const headers: Record<string, string> = { "x-authorization": intruderToken, ...example.headers };
  if (contentType !== undefined) headers["content-type"] = contentType;
  const response = await fetch(`${conductor.baseUrl}${target(route.path, example, "")}`, { method: route.method, headers, body });
  return { status: response.status, text: await response.text() };
}

const namespaced = ROUTES.filter((r) => r.path.includes("{ns}"));
const restRoutes = ROUTES.filter((r) => r.auth !== "public").map((r) => [`${r.method} ${r.path}`, r] as const);
// POST /token trades a key for a token: the victim's key is the victim's own credential, not a way in.
const conductorRoutes = CONDUCTOR_ROUTES.filter((r) => r.path !== "/token").map((r) => [`${r.method} ${r.path}`, r] as const);

describe("an intruder's key against the victim's namespace", () => {
  it("covers the routes (the walk itself works)", () => {
    expect(namespaced.length).toBeGreaterThan(20);
    expect(conductorRoutes.length).toBeGreaterThan(20);
  });

  it.each(namespaced.map((r) => [`${r.method} ${r.path}`, r] as const))("REST %s aimed at the victim's namespace: 404, nothing of it", async (_label, route) => {
    const answer = await sendRest(route, victim.namespace.name);
    expect(leak(answer)).toBeNull();
    expect(answer.status, answer.text).toBe(404);
  });

  it.each(restRoutes)("REST %s in the intruder's namespace with the victim's ids: nothing of the victim's", async (_label, route) => {
    expect(leak(await sendRest(route, intruder.namespace.name))).toBeNull();
  });

  it.each(conductorRoutes)("Conductor %s with the victim's ids: nothing of the victim's", async (_label, route) => {
    expect(leak(await sendConductor(route))).toBeNull();
  });

  it("changed nothing of the victim's: every row of its namespace as it was", async () => {
    expect(await snapshotNamespace(t.db, victim.namespace.id)).toEqual(before);
  });
});
