import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { json } from "../../db/json";
import { useTestDatabase } from "../../db/testing/test-database";
import { FilesystemBlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import { reportTaskResult } from "../tasks/report-task-result";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { leaseSystemTasks } from "../store/system-task-queues";
import { SYSTEM_TASK_TYPES, enqueueTask } from "../store/task-queues";
import { insertTasks } from "../store/task-executions";
import { insertWorkflowExecution } from "../store/workflow-executions";
import { executeSystemTask, runSystemTaskBatch } from "./run-system-tasks";
import type { SystemTaskRunnerDeps } from "./run-system-tasks";

const t = useTestDatabase();
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;
let scripts: QuickJsScriptEvaluator;
let jq: JqTransform;
let server: http.Server;
let base: string;
let hits = 0;

beforeAll(async () => {
  namespaceId = (await t.db.insertInto("Namespaces").values({ name: `sys-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-system-tasks-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  scripts = await createQuickJsScriptEvaluator({ timeoutMs: 300 });
  jq = await createJqTransform();
  server = http.createServer((req, res) => {
    hits++;
    if (req.url === "/big") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ data: "b".repeat(300 * 1024) }));
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ path: req.url, method: req.method }));
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
beforeEach(async () => {
  hits = 0;
  await t.db.deleteFrom("TaskQueues").execute();
});

const deps = (allowPrivateNetworks = true): SystemTaskRunnerDeps => ({ db: t.db, blobs, scripts, jq, http: { allowPrivateNetworks } });

/** A RUNNING workflow with one SCHEDULED system task queued as the decider queues it (queue = type). */
async function queueSystemTask(taskType: string, input: Record<string, unknown>, options: { inputRef?: string; priority?: number } = {}) {
  const workflow = await insertWorkflowExecution(t.db, { namespaceId, defName: "orders", defVersion: 3, status: "RUNNING", correlationId: "corr-1" });
  const [task] = await insertTasks(t.db, [
    {
      workflowId: workflow.id,
      namespaceId,
      refName: `${taskType.toLowerCase()}_ref`,
      iteration: 0,
      attempt: 0,
      taskType,
      taskDefName: taskType,
      queueName: taskType,
      status: "SCHEDULED",
      input: options.inputRef ? {} : input,
      inputRef: options.inputRef ?? null,
    },
  ]);
  await enqueueTask(t.db, { queueName: taskType, taskId: task!.id, workflowId: workflow.id, namespaceId, taskType, priority: options.priority ?? 0 });
  return task!;
}

const stored = (workflowId: string) => t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).executeTakeFirstOrThrow();
const outbox = (workflowId: string) => t.db.selectFrom("OutboxEvents").selectAll().where("workflowId", "=", workflowId).execute();

describe("runSystemTaskBatch", () => {
  it("runs HTTP, INLINE and JSON_JQ_TRANSFORM tasks and reports each: COMPLETED, output stored, queue row gone, decide enqueued", async () => {
    const httpTask = await queueSystemTask("HTTP", { http_request: { uri: `${base}/ping`, method: "POST", body: { a: 1 } } });
    const inlineTask = await queueSystemTask("INLINE", { evaluatorType: "graaljs", expression: "$.x + $.y", x: 2, y: 40 });
    const jqTask = await queueSystemTask("JSON_JQ_TRANSFORM", { queryExpression: ".list | map(. * 10)", list: [1, 2] });

    expect(await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" })).toBe(3);

    expect(await stored(httpTask.workflowId)).toMatchObject({
      status: "COMPLETED",
      workerId: "sys-test",
      output: { response: { statusCode: 200, body: { path: "/ping", method: "POST" } } },
    });
    expect(await stored(inlineTask.workflowId)).toMatchObject({ status: "COMPLETED", output: { result: 42 } });
    expect(await stored(jqTask.workflowId)).toMatchObject({ status: "COMPLETED", output: { result: [10, 20], resultList: [[10, 20]] } });
    expect(await t.db.selectFrom("TaskQueues").select("id").execute()).toEqual([]);
    const decides = await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "in", [httpTask.workflowId, inlineTask.workflowId, jqTask.workflowId]).execute();
    expect(decides).toHaveLength(3);
    expect(await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" })).toBe(0);
  });

  it("an INLINE script that loops forever fails with a reason, and the task after it still runs", async () => {
    const looping = await queueSystemTask("INLINE", { evaluatorType: "javascript", expression: "for (;;) {}" }, { priority: 9 });
    const next = await queueSystemTask("INLINE", { evaluatorType: "javascript", expression: "'fine'" });
    expect(await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test", concurrency: 1 })).toBe(2);
    expect(await stored(looping.workflowId)).toMatchObject({
      status: "FAILED",
      reasonForIncompletion: "INLINE script failed: timed out after 300 ms",
      output: { error: "timed out after 300 ms" },
    });
    expect(await stored(next.workflowId)).toMatchObject({ status: "COMPLETED", output: { result: "fine" } });
    // And a later batch on the same sandbox.
    const later = await queueSystemTask("INLINE", { evaluatorType: "javascript", expression: "[1, 2].length" });
    expect(await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" })).toBe(1);
    expect((await stored(later.workflowId)).output).toEqual({ result: 2 });
  });

  it("refuses a private address under the default policy: FAILED_WITH_TERMINAL_ERROR, nothing sent", async () => {
    const task = await queueSystemTask("HTTP", { http_request: { uri: `${base}/secret` } });
    await runSystemTaskBatch(deps(false), { limit: 10, owner: "sys-test" });
    expect(await stored(task.workflowId)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(/refused.*loopback/) as unknown });
    expect(hits).toBe(0);
  });

  it("offloads an HTTP response over 256 KB to the blob store", async () => {
    const task = await queueSystemTask("HTTP", { http_request: { uri: `${base}/big` } });
    await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" });
    const row = await stored(task.workflowId);
    expect(row.status).toBe("COMPLETED");
    expect(row.output).toEqual({});
    expect(row.outputRef).toMatch(/^fs:/);
    const output = (await resolvePayload(blobs, { inline: row.output, ref: row.outputRef })) as { response: { body: { data: string } } };
    expect(output.response.body.data).toHaveLength(300 * 1024);
  });

  it("resolves an offloaded input before running the task", async () => {
    const inputRef = await blobs.put(json({ evaluatorType: "javascript", expression: "$.big.length", big: "q".repeat(1000) }), { contentType: "application/json" });
    const task = await queueSystemTask("INLINE", {}, { inputRef });
    await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" });
    expect(await stored(task.workflowId)).toMatchObject({ status: "COMPLETED", output: { result: 1000 } });
  });
});

describe("EVENT through the outbox", () => {
  it("writes exactly one outbox row with the completion; the output is Conductor's payload plus event_produced", async () => {
    const task = await queueSystemTask("EVENT", { sink: "conductor", orderId: 7 });
    await runSystemTaskBatch(deps(), { limit: 10, owner: "sys-test" });
    const payload = { sink: "conductor", orderId: 7, workflowInstanceId: task.workflowId, workflowType: "orders", workflowVersion: 3, correlationId: "corr-1" };
    expect(await stored(task.workflowId)).toMatchObject({ status: "COMPLETED", output: { ...payload, event_produced: "conductor:orders:event_ref" } });
    const rows = await outbox(task.workflowId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ namespaceId, topic: "conductor:orders:event_ref", payload, publishedAt: null, attempts: 0 });
  });

  it("maps conductor:<name> and webhook:<url> sinks to their topics", async () => {
    const named = await queueSystemTask("EVENT", { sink: "conductor:shipping" });
    const hook = await queueSystemTask("EVENT", { sink: "webhook:https://hooks.example.com/in?k=1" });
    await runSystemTaskBatch(deps(false), { limit: 10, owner: "sys-test" });
    expect((await outbox(named.workflowId)).map((r) => r.topic)).toEqual(["conductor:orders:shipping"]);
    expect((await outbox(hook.workflowId)).map((r) => r.topic)).toEqual(["webhook:https://hooks.example.com/in?k=1"]);
  });

  it.each([
    ["sqs:orders", /unsupported sink "sqs"/],
    ["webhook:ftp://example.com/x", /unsupported URL scheme "ftp"/],
    ["webhook:http://169.254.169.254/", /refused.*link-local/],
    ["", /no sink/],
  ])("fails terminally on the sink %j and writes no outbox row", async (sink, why) => {
    const task = await queueSystemTask("EVENT", { sink });
    await runSystemTaskBatch(deps(false), { limit: 10, owner: "sys-test" });
    expect(await stored(task.workflowId)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: expect.stringMatching(why) as unknown });
    expect(await outbox(task.workflowId)).toEqual([]);
  });

  it("rolls the outbox row back with a refused completion (the task was cancelled while the event was prepared)", async () => {
    const task = await queueSystemTask("EVENT", { sink: "conductor" });
    const [leased] = await leaseSystemTasks(t.db, { queueNames: SYSTEM_TASK_TYPES, count: 1, leaseSeconds: 60, owner: "sys-test" });
    const outcome = await executeSystemTask(leased!.task, deps());
    expect(outcome.status).toBe("COMPLETED");
    await t.db.updateTable("TaskExecutions").set({ status: "CANCELED", endedAt: new Date() }).where("workflowId", "=", task.workflowId).execute();
    const report = await reportTaskResult(
      { db: t.db, blobs },
      { namespaceId, workflowId: task.workflowId, taskId: task.id, status: "COMPLETED", output: outcome.output, workerId: "sys-test", inTransaction: outcome.inTransaction },
    );
    expect(report).toMatchObject({ ok: false, error: "not_in_progress", status: "CANCELED" });
    expect(await outbox(task.workflowId)).toEqual([]);
  });
});
