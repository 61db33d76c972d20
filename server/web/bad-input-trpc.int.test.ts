import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { useTestDatabase } from "../../db/testing/test-database";
import { DEFAULT_MAX_BODY_BYTES } from "../rest/dispatch";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { appRouter } from "../trpc/routers/_app";
import { useWebEnvironment } from "../trpc/testing";
import { getWebContext } from "./web-context";
import { createApiFixture, snapshotNamespace } from "./testing/api-fixtures";
import type { ApiFixture } from "./testing/api-fixtures";
import { badInputCases, hostileStringCases, inLanes, statusTally } from "./testing/bad-input";
import type { CorpusRoute, HttpCase, RouteExample } from "./testing/bad-input";
import { serveFetchHandler } from "./testing/serve-fetch-handler";
import { APPEND_ONLY_TABLES, tableCounts } from "./testing/table-counts";

/**
 * The bad-input corpus over every tRPC procedure (server/trpc/routers), over
 * real HTTP through the console's endpoint (app/api/trpc/[trpc]/route.ts),
 * signed in as the owner: queries get their input as `?input=`, mutations as
 * the body, as the browser's client sends them. No answer may be a 5xx;
 * every refusal is tRPC's error with a message, a field refused by its schema
 * named in `data.zodError`; and the bad input as a whole changes no row.
 */

const t = useTestDatabase();
useWebEnvironment(t);

type Handler = (request: Request) => Promise<Response>;
let server: Server;
let baseUrl: string;
let cookie: string;
let scripts: QuickJsScriptEvaluator;
let fx: ApiFixture;
const OVERSIZE = Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x20);
/** Past this a GET's URL outgrows what node:http takes in its request line (431): such a case is a refusal of the URL, not of a field. */
const MAX_URL_INPUT = 8 * 1024;

interface Procedure {
  _def: { type: "query" | "mutation"; inputs: z.ZodObject[] };
}
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, Procedure>)
  .filter(([, p]) => p._def.inputs.length > 0)
  .map(([name, p]) => ({ name, type: p._def.type, input: p._def.inputs.reduce((all, one) => all.extend(one.shape)) }));

beforeAll(async () => {
  const module = (await import(pathToFileURL(path.join(process.cwd(), "app/api/trpc/[trpc]/route.ts")).href)) as { GET: Handler; POST: Handler };
  server = createServer((req, res) => void serveFetchHandler(req, res, (request) => (request.method === "GET" ? module.GET(request) : module.POST(request))));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const setup = await fetch(`${baseUrl}/api/trpc/auth.setupOwner`, {
    method: "POST",
    headers: { origin: baseUrl, "content-type": "application/json" },
    body: JSON.stringify({ email: "owner@example.com", password: "tulip-harbour-9-lantern" }),
  });
  cookie = (setup.headers.getSetCookie().find((c) => c.startsWith("nf_session=")) ?? "").split(";")[0]!;
  if (cookie === "") throw new Error(`setupOwner answered ${setup.status}: ${await setup.text()}`);
  scripts = await createQuickJsScriptEvaluator();
  fx = await createApiFixture({ db: t.db, blobs: getWebContext().blobs, scripts }, "trpccorpus");
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await scripts?.close();
});

/** A valid-looking input for a procedure: its namespace, and each field it declares that names something of the fixture. */
function exampleOf(input: z.ZodObject): RouteExample {
  const values: Record<string, unknown> = {
    namespace: fx.namespace.name,
    name: fx.flow,
    workflowId: fx.simpleRun,
    runId: fx.simpleRun,
    executionId: fx.simpleRun,
    taskId: fx.simpleTaskId,
    humanTaskId: fx.humanTaskId,
    version: 1,
    limit: 10,
  };
  const body: Record<string, unknown> = {};
  const shape: Record<string, z.ZodType> = input.shape;
  for (const [key, schema] of Object.entries(shape)) if (key in values && schema.safeParse(values[key]).success) body[key] = values[key];
  return { body };
}

interface Answer {
  status: number;
  text: string;
}

async function send(procedure: (typeof procedures)[number], c: HttpCase): Promise<Answer> {
  const headers: Record<string, string> = { cookie, origin: baseUrl };
  let response: Response;
  if (procedure.type === "query") {
    // A query's input goes in the URL: a body-sized one (oversize) is no URL anyone can send, so none is sent.
    const input = c.body?.bytes !== undefined ? escapeBytes(c.body.bytes) : encodeURIComponent(c.body?.text ?? "");
    const search = input === "" ? "" : `?input=${input}`;
    response = await fetch(`${baseUrl}/api/trpc/${procedure.name}${search}`, { headers });
  } else {
    if (c.body !== undefined) headers["content-type"] = c.body.contentType ?? "application/json";
    const body = (c.body === undefined ? undefined : c.body.oversize === true ? OVERSIZE : (c.body.bytes ?? c.body.text)) as BodyInit | undefined;
    response = await fetch(`${baseUrl}/api/trpc/${procedure.name}`, { method: "POST", headers, body });
  }
  return { status: response.status, text: await response.text() };
}

/** Raw bytes percent-encoded one by one, so invalid UTF-8 reaches the server as sent. */
function escapeBytes(bytes: Uint8Array): string {
  return [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
}

interface ErrorBody {
  error?: { message?: unknown; data?: { zodError?: { formErrors: string[]; fieldErrors: Record<string, string[]> } | null; problems?: unknown; inputProblems?: unknown } };
}

function urlTooLong(procedure: (typeof procedures)[number], c: HttpCase): boolean {
  return procedure.type === "query" && (c.body?.oversize === true || (c.body?.text ?? "").length > MAX_URL_INPUT);
}

function fault(procedure: (typeof procedures)[number], c: HttpCase, answer: Answer): string | null {
  const shown = answer.text.slice(0, 300);
  if (answer.status >= 500) return `${answer.status}: ${shown}`;
  if (urlTooLong(procedure, c)) return answer.status >= 400 ? null : `a URL past ${MAX_URL_INPUT} bytes of input answered ${answer.status}`;
  let error: ErrorBody["error"] = {};
  if (answer.status >= 400) {
    try {
      error = (JSON.parse(answer.text) as ErrorBody).error ?? {};
    } catch {
      return `${answer.status} is not JSON: ${shown}`;
    }
    if (typeof error.message !== "string" || error.message === "") return `${answer.status} without a message: ${shown}`;
  }
  const expected = c.expect;
  if (expected === "safe") return null;
  // tRPC reads a mutation's body as JSON whatever its content type: a JSON body labelled text/plain is a request like any other.
  if (expected.refused === "4xx" || expected.refused === 415) return answer.status < 500 ? null : `expected a refusal, got ${answer.status}: ${shown}`;
  // A namespace-scoped procedure authorizes its namespace before it parses the rest: with other fields wrong, an
  // unknown namespace is a 404 first. A refusal of the field itself (names) must still be the 400 naming it.
  if (expected.refused === 400 && expected.names === undefined && answer.status >= 400) return null;
  if (answer.status !== expected.refused) return `expected ${expected.refused}, got ${answer.status}: ${shown}`;
  const field = expected.names?.path[0];
  if (expected.names?.location === "body" && field !== undefined) {
    const data = error.data ?? {};
    const named = data.zodError?.fieldErrors[String(field)] !== undefined || data.problems != null || data.inputProblems != null;
    if (!named) return `does not name ${String(field)}: ${shown}`;
  }
  if (expected.detail !== undefined && !expected.detail.test(String(error.message))) return `the message does not match ${String(expected.detail)}: ${shown}`;
  return null;
}

async function runCases(procedure: (typeof procedures)[number], cases: readonly HttpCase[]): Promise<{ faults: string[]; statuses: number[] }> {
  const faults: string[] = [];
  const statuses: number[] = [];
  await inLanes(cases, 4, async (c) => {
    const answer = await send(procedure, c);
    statuses.push(answer.status);
    const found = fault(procedure, c, answer);
    if (found !== null) faults.push(`${c.label} → ${found}`);
  });
  return { faults, statuses };
}

function corpusRoute(procedure: (typeof procedures)[number]): CorpusRoute {
  return { method: "POST", path: `/api/trpc/${procedure.name}`, body: procedure.input };
}

const cases = procedures.map((p) => [p.name, p] as const);
const summary: string[] = [];

describe("bad input to every tRPC procedure", () => {
  let before: unknown;
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    before = await snapshotNamespace(t.db, fx.namespace.id);
    beforeCounts = await tableCounts(t.db);
  });
  afterAll(() => {
    console.log(`tRPC bad-input corpus, ${procedures.length} procedures:\n${summary.join("\n")}`);
  });

  it("finds the procedures (the walk itself works)", () => {
    expect(procedures.map((p) => p.name)).toEqual(expect.arrayContaining(["workflows.save", "runs.start", "executions.list", "humanTasks.submit"]));
  });

  it.each(cases)("%s: no 5xx, every refusal an error naming the field", async (label, procedure) => {
    const generated = badInputCases(corpusRoute(procedure), exampleOf(procedure.input), { maxBodyBytes: DEFAULT_MAX_BODY_BYTES, readOnly: procedure.type === "query" });
    const { faults, statuses } = await runCases(procedure, generated.cases);
    summary.push(`  ${label}: ${generated.cases.length} cases (${generated.skipped} valid ones skipped) → ${statusTally(statuses)}`);
    expect(faults).toEqual([]);
  });

  it("wrote nothing: every row of the namespace and every table's count as before", async () => {
    expect(await snapshotNamespace(t.db, fx.namespace.id)).toEqual(before);
    expect(await tableCounts(t.db)).toEqual(beforeCounts);
  });
});

describe("hostile strings in every string a tRPC procedure takes", () => {
  let beforeCounts: Record<string, number>;
  beforeAll(async () => {
    beforeCounts = await tableCounts(t.db);
  });

  it.each(cases)("%s: no 5xx", async (_label, procedure) => {
    const { faults } = await runCases(procedure, hostileStringCases(corpusRoute(procedure), exampleOf(procedure.input), { maxBodyBytes: DEFAULT_MAX_BODY_BYTES }));
    expect(faults).toEqual([]);
  });

  it("left every append-only table with at least the rows it had", async () => {
    const after = await tableCounts(t.db);
    for (const table of APPEND_ONLY_TABLES) expect(after[table], table).toBeGreaterThanOrEqual(beforeCounts[table]!);
  });
});
