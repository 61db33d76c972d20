import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { compile, validateDefinition } from "../../engine";
import { chain, node, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { evaluateBatch } from "../evaluator/evaluator";
import { relayOutboxBatch } from "../sidecar/outbox-relay";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { enqueueDecide } from "../store/decide-queues";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { runSystemTaskBatch } from "./run-system-tasks";

/**
 * System tasks scheduled by the real decider, run by the runner, and read
 * back by the next evaluation: the seams between decide.ts (how each node's
 * task input is built), the queue names, the runner and the evaluator.
 */

const t = useTestDatabase();
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;
let scripts: QuickJsScriptEvaluator;
let jq: JqTransform;
let server: http.Server;
let base: string;
const webhookBodies: unknown[] = [];

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `e2e-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-system-e2e-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  scripts = await createQuickJsScriptEvaluator();
  jq = await createJqTransform();
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      if (req.url === "/hook") {
        webhookBodies.push(JSON.parse(body));
        res.writeHead(204);
        res.end();
        return;
      }
      if (req.url === "/big") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ status: "big-ok", filler: "f".repeat(1024 * 1024) }));
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ items: [{ price: 3 }, { price: 4 }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await scripts?.close();
  await jq?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(blobRoot, { recursive: true, force: true });
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

/** Alternates decider and system-task passes until neither moves. */
async function run(workflowId: string) {
  for (let round = 0; round < 30; round++) {
    const evaluated = await evaluateBatch({ db: t.db, scripts, blobs }, { limit: 10 });
    const ran = await runSystemTaskBatch({ db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks: true } }, { limit: 10, owner: "sys-e2e" });
    if (evaluated === 0 && ran === 0) break;
  }
  return t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", workflowId).executeTakeFirstOrThrow();
}

describe("system tasks in a workflow", () => {
  it("HTTP → JSON_JQ_TRANSFORM → INLINE → EVENT (webhook) completes, each reading the one before; the relay delivers the event", async () => {
    const id = await start(
      workflow(
        [
          node("HTTP", "fetch", { httpRequest: { uri: `${base}/items`, method: "GET" } }),
          node("JSON_JQ_TRANSFORM", "prices", { queryExpression: "[.items[].price]", input: { items: "${fetch.output.response.body.items}" } }),
          node("INLINE", "total", { evaluatorType: "graaljs", expression: "$.prices.reduce((a, b) => a + b, 0) * $.factor", input: { prices: "${prices.output.result}", factor: "${workflow.input.factor}" } }),
          node("EVENT", "announce", { sink: `webhook:${base}/hook`, input: { total: "${total.output.result}" } }),
        ],
        chain("fetch", "prices", "total", "announce"),
      ),
      { factor: 10 },
    );
    const wf = await run(id);
    expect(wf.status).toBe("COMPLETED");
    const tasks = await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", id).execute();
    const byRef = Object.fromEntries(tasks.map((task) => [task.refName, task]));
    expect(byRef.prices!.output).toEqual({ result: [3, 4], resultList: [[3, 4]] });
    expect(byRef.total!.output).toEqual({ result: 70 });
    expect(byRef.announce!.output).toMatchObject({ total: 70, event_produced: `webhook:${base}/hook` });

    const events = await t.db.selectFrom("OutboxEvents").selectAll().where("workflowId", "=", id).execute();
    expect(events).toHaveLength(1);
    expect(await relayOutboxBatch({ db: t.db, http: { allowPrivateNetworks: true } }, { limit: 10 })).toBe(1);
    expect(webhookBodies).toEqual([expect.objectContaining({ total: 70, workflowInstanceId: id })]);
  });

  it("a 1 MB HTTP response goes to the blob store and a downstream expression reads it", async () => {
    const id = await start(
      workflow(
        [
          node("HTTP", "big", { httpRequest: { uri: `${base}/big` } }),
          node("INLINE", "check", { evaluatorType: "javascript", expression: "$.status + '!'", input: { status: "${big.output.response.body.status}" } }),
        ],
        chain("big", "check"),
      ),
    );
    const wf = await run(id);
    expect(wf.status).toBe("COMPLETED");
    const big = await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", id).where("refName", "=", "big").executeTakeFirstOrThrow();
    expect(big.outputRef).toMatch(/^fs:/);
    expect(big.output).toEqual({});
    const check = await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", id).where("refName", "=", "check").executeTakeFirstOrThrow();
    expect(check.output).toEqual({ result: "big-ok!" });
  });

  it("an INLINE task that loops forever fails the workflow with the reason", async () => {
    const id = await start(workflow([node("INLINE", "spin", { evaluatorType: "javascript", expression: "while (true) {}", policy: { retryCount: 0 } })]));
    const wf = await run(id);
    expect(wf.status).toBe("FAILED");
    const spin = await t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", id).orderBy("attempt", "desc").executeTakeFirstOrThrow();
    expect(spin.reasonForIncompletion).toMatch(/timed out/);
  });
});
