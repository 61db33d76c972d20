import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { compile, validateDefinition } from "../../engine";
import { chain, node, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { evaluateBatch } from "../evaluator/evaluator";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { putSecret, secretLookup, sealingKeysOf } from "../secrets/secrets";
import { enqueueDecide } from "../store/decide-queues";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { runSystemTaskBatch } from "./run-system-tasks";

/**
 * HTTP_POLL against an HTTP server on loopback and JDBC against this test's
 * own Postgres, each scheduled by the real decider and run by the real
 * runner. The runner's clock is virtual, so a poll postponed for its
 * interval is due on the next pass without the test waiting for it.
 */

const t = useTestDatabase();
const keys = sealingKeysOf({ secret: "j".repeat(64), previousSecrets: [] });
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;
let scripts: QuickJsScriptEvaluator;
let jq: JqTransform;
let server: http.Server;
let base: string;
/** Requests seen per job id, and the poll on which each job reports DONE. */
const seen = new Map<string, number>();
const doneAfter = new Map<string, number>();

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `poll-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-poll-jdbc-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  scripts = await createQuickJsScriptEvaluator();
  jq = await createJqTransform();
  server = http.createServer((req, res) => {
    const id = /^\/jobs\/([\w-]+)$/.exec(req.url ?? "")?.[1];
    if (id === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    const done = n >= (doneAfter.get(id) ?? 1);
    // Not there yet answers 404 for the first request: polling carries on over a non-2xx answer.
    res.writeHead(n === 1 && !done ? 404 : 200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ id, state: done ? "DONE" : "RUNNING", polls: n }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  await sql`CREATE TABLE jdbc_orders (id int PRIMARY KEY, customer text NOT NULL, total numeric NOT NULL, placed_at timestamptz NOT NULL DEFAULT '2030-01-02T03:04:05Z')`.execute(t.db);
  await putSecret(t.db, keys, { namespaceId, name: "JDBC_ORDERS_DB", value: t.url, actor: { type: "system", id: "test" }, updatedBy: "test" });
});
afterAll(async () => {
  await scripts?.close();
  await jq?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(blobRoot, { recursive: true, force: true });
});
beforeEach(async () => {
  await sql`TRUNCATE jdbc_orders`.execute(t.db);
  await sql`INSERT INTO jdbc_orders (id, customer, total) VALUES (1, 'ada', 10.5), (2, 'bob', 3), (3, 'ada', 7)`.execute(t.db);
});

async function start(definition: Json, input: Json = {}): Promise<string> {
  const name = `wf_${randomUUID().slice(0, 8)}`;
  const valid = validateDefinition({ ...definition, name });
  if (!valid.ok) throw new Error(`invalid test definition: ${JSON.stringify(valid.problems)}`);
  await t.db
    .insertInto("WorkflowDefinitions")
    .values({ namespaceId, name, version: 1, graph: JSON.stringify(valid.definition), blueprint: JSON.stringify(compile(valid.definition)) })
    .execute();
  const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: name, defVersion: 1, status: "RUNNING", input });
  await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: "start" });
  return wf.id;
}

/** Alternates decider and runner passes until neither moves; the runner's clock moves an hour a pass. */
async function run(workflowId: string) {
  let clock = Date.now();
  const deps = { db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks: true }, secrets: secretLookup(t.db, keys), now: () => new Date(clock) };
  for (let round = 0; round < 40; round++) {
    const evaluated = await evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 });
    const ran = await runSystemTaskBatch(deps, { limit: 10, owner: "sys-poll" });
    clock += 3_600_000;
    if (evaluated === 0 && ran === 0) {
      const pending = await t.db.selectFrom("TaskQueues").select("taskId").where("workflowId", "=", workflowId).execute();
      if (pending.length === 0) break;
    }
  }
  return t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId).executeTakeFirstOrThrow();
}

async function taskOf(workflowId: string, ref: string) {
  return t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).where("refName", "=", ref).orderBy("attempt", "desc").executeTakeFirstOrThrow();
}

const poll = (job: string, extra: Json = {}) =>
  node("HTTP_POLL", "await_job", {
    httpRequest: {
      uri: `${base}/jobs/${job}`,
      method: "GET",
      terminationCondition: "$.output.response.body.state === 'DONE'",
      pollingInterval: 30,
      pollingStrategy: "EXPONENTIAL_BACKOFF",
      ...extra,
    },
  });

describe("HTTP_POLL", () => {
  it("polls until the condition holds, over a 404 first, and a downstream task reads the last response", async () => {
    const job = randomUUID();
    doneAfter.set(job, 3);
    const id = await start(
      workflow(
        [poll(job), node("INLINE", "after", { evaluatorType: "javascript", expression: "$.state + '@' + $.polls", input: { state: "${await_job.output.response.body.state}", polls: "${await_job.output.pollCount}" } })],
        chain("await_job", "after"),
      ),
    );
    const wf = await run(id);
    expect(wf.status).toBe("COMPLETED");
    expect(seen.get(job)).toBe(3);
    const task = await taskOf(id, "await_job");
    expect(task).toMatchObject({ status: "COMPLETED", attempt: 0, pollCount: 3 });
    expect(task.output).toMatchObject({ pollCount: 3, response: { statusCode: 200, body: { state: "DONE", polls: 3 } } });
    expect((await taskOf(id, "after")).output).toEqual({ result: "DONE@3" });
  });

  it("fails with the reason once maxPollCount requests have not satisfied the condition", async () => {
    const job = randomUUID();
    doneAfter.set(job, 100);
    const id = await start(workflow([{ ...poll(job, { maxPollCount: 2 }), policy: { retryCount: 0 } }]));
    const wf = await run(id);
    expect(wf.status).toBe("FAILED");
    expect(seen.get(job)).toBe(2);
    const task = await taskOf(id, "await_job");
    expect(task.reasonForIncompletion).toMatch(/terminationCondition still false after 2 requests \(maxPollCount 2\)/);
    expect(task.output).toMatchObject({ pollCount: 2, response: { body: { state: "RUNNING" } } });
  });

  it("refuses a loopback address without the private-network opt-in, as HTTP does", async () => {
    const id = await start(workflow([{ ...poll(randomUUID()), policy: { retryCount: 0 } }]));
    await evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 });
    await runSystemTaskBatch({ db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks: false } }, { limit: 10, owner: "sys-poll" });
    const task = await taskOf(id, "await_job");
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task.reasonForIncompletion).toMatch(/^HTTP_POLL GET .* failed: /);
  });
});

const jdbc = (ref: string, statement: Json) => node("JDBC", ref, { jdbc: { connectionId: "orders-db", ...statement }, policy: { retryCount: 0 } });

describe("JDBC against a configured Postgres connection", () => {
  it("SELECTs rows with ? parameters from the input, and an UPDATE with the expected count commits", async () => {
    const id = await start(
      workflow(
        [
          jdbc("orders", { type: "SELECT", statement: "SELECT id, total, placed_at FROM jdbc_orders WHERE customer = ? ORDER BY id", parameters: ["${workflow.input.customer}"] }),
          jdbc("mark", { type: "UPDATE", statement: "UPDATE jdbc_orders SET total = total + ? WHERE customer = ?", parameters: [1, "${workflow.input.customer}"], expectedUpdateCount: 2 }),
        ],
        chain("orders", "mark"),
      ),
      { customer: "ada" },
    );
    const wf = await run(id);
    expect(wf.status).toBe("COMPLETED");
    expect((await taskOf(id, "orders")).output).toEqual({
      result: [
        { id: 1, total: "10.5", placed_at: "2030-01-02T03:04:05.000Z" },
        { id: 3, total: "7", placed_at: "2030-01-02T03:04:05.000Z" },
      ],
    });
    expect((await taskOf(id, "mark")).output).toEqual({ result: 2 });
    const totals = await sql<{ total: string }>`SELECT total::text FROM jdbc_orders WHERE customer = 'ada' ORDER BY id`.execute(t.db);
    expect(totals.rows.map((r) => r.total)).toEqual(["11.5", "8"]);
  });

  it("rolls an UPDATE back and fails when it changes a different number of rows than expected", async () => {
    const id = await start(workflow([jdbc("wipe", { type: "UPDATE", statement: "DELETE FROM jdbc_orders WHERE total > ?", parameters: [0], expectedUpdateCount: 1 })]));
    const wf = await run(id);
    expect(wf.status).toBe("FAILED");
    expect((await taskOf(id, "wipe")).reasonForIncompletion).toBe("JDBC UPDATE changed 3 rows, expected 1: rolled back");
    const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jdbc_orders`.execute(t.db);
    expect(count.rows[0]!.n).toBe(3);
  });

  it("names the secret to create for a connection that is not configured, and never shows a configured URL", async () => {
    const missing = await start(workflow([node("JDBC", "q", { jdbc: { connectionId: "billing", type: "SELECT", statement: "SELECT 1" } })]));
    expect((await run(missing)).status).toBe("FAILED");
    expect((await taskOf(missing, "q")).reasonForIncompletion).toBe('JDBC task: no connection "billing": store its Postgres URL as the secret JDBC_BILLING (Settings → Secrets)');

    const broken = await start(workflow([jdbc("bad", { type: "SELECT", statement: "SELECT nope FROM jdbc_orders" })]));
    expect((await run(broken)).status).toBe("FAILED");
    const task = await taskOf(broken, "bad");
    expect(task.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(task.reasonForIncompletion).toMatch(/^JDBC SELECT on "orders-db" failed: column "nope" does not exist \(SQLSTATE 42703\)$/);
    const password = new URL(t.url).password;
    const everything = JSON.stringify(await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", broken).execute());
    expect(everything).not.toContain(t.url);
    if (password.length >= 4) expect(everything).not.toContain(password);
  });
});
