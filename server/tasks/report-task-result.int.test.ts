import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { DECIDE_CHANNEL } from "../lib/notifier";
import { waitUntil } from "../testing/wait-until";
import { FilesystemBlobStore } from "../lib/blob-store";
import { OFFLOAD_THRESHOLD_BYTES, resolvePayload } from "../lib/payload-offload";
import { reportTaskResult } from "./report-task-result";
import { enqueueTask, leaseTasks } from "../store/task-queues";
import { insertTasks } from "../store/task-executions";

const t = useTestDatabase();
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;

beforeAll(async () => {
  namespaceId = (await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-report-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
});
afterAll(async () => {
  await rm(blobRoot, { recursive: true, force: true });
});

/** Every blob file under the root (temporary files included). */
async function blobFiles(): Promise<string[]> {
  try {
    return (await readdir(blobRoot, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  } catch {
    return [];
  }
}

/** A task leased by `owner`, IN_PROGRESS, with its queue row. */
async function leasedTask(owner = "w1") {
  const workflowId = randomUUID();
  const queueName = `q-${randomUUID().slice(0, 8)}`;
  const [task] = await insertTasks(t.db, [
    { workflowId, namespaceId, refName: "a", iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: queueName, queueName },
  ]);
  await enqueueTask(t.db, { queueName, taskId: task!.id, workflowId, namespaceId, taskType: "SIMPLE", priority: 0 });
  const [leased] = await leaseTasks(t.db, { queueName, namespaceId, count: 1, leaseSeconds: 60, owner });
  expect(leased?.task.status).toBe("IN_PROGRESS");
  return { workflowId, taskId: task!.id, queueName };
}

const row = (workflowId: string) => t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).executeTakeFirstOrThrow();

describe("reportTaskResult", () => {
  it("offloads a 1 MB output to the blob store: the row keeps {} and the ref, the blob holds the output", async () => {
    const { workflowId, taskId, queueName } = await leasedTask();
    const output = { rows: Array.from({ length: 1024 }, (_, i) => ({ i, text: "x".repeat(1024) })) };
    expect(JSON.stringify(output).length).toBeGreaterThan(1024 * 1024);

    const report = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output, workerId: "w1" });
    expect(report.ok).toBe(true);
    const stored = await row(workflowId);
    expect(stored.status).toBe("COMPLETED");
    expect(stored.output).toEqual({});
    expect(stored.outputRef).toMatch(/^fs:/);
    expect(report.ok && report.outputRef).toBe(stored.outputRef);
    expect(await resolvePayload(blobs, { inline: stored.output, ref: stored.outputRef })).toEqual(output);
    // The rest of the completion happened with it.
    expect(await t.db.selectFrom("TaskQueues").select("id").where("queueName", "=", queueName).execute()).toEqual([]);
    expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", workflowId).execute()).toHaveLength(1);
  });

  it("wakes the deciders after its commit, in a transaction of its own; the report's own commit sends no NOTIFY", async () => {
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    const wakes: { payload: string | undefined; processId: number }[] = [];
    listener.on("notification", (n) => {
      if (n.channel === DECIDE_CHANNEL) wakes.push({ payload: n.payload, processId: n.processId });
    });
    try {
      await listener.query(`LISTEN ${DECIDE_CHANNEL}`);
      const { workflowId, taskId } = await leasedTask();
      // Which backend commits the report: the pool's one connection here (a one-connection handle).
      const single = createDb(t.url, { max: 1 });
      try {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(single);
        const report = await reportTaskResult({ db: single, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", workerId: "w1" });
        expect(report.ok).toBe(true);
        await waitUntil(() => wakes.length > 0, { what: "the deciders' wake", timeoutMs: 5000, intervalMs: 10 });
        expect(wakes[0]).toEqual({ payload: "wake", processId: rows[0]!.pid });
        // The row was queued before the wake went: a decider woken by it finds the work.
        expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", workflowId).execute()).toHaveLength(1);
        // The report's transaction itself notified nobody: the decide row's trigger left the wake to the caller.
        const before = wakes.length;
        await sql`SELECT * FROM "nf_report_task"(${namespaceId}::uuid, ${randomUUID()}::uuid, ${randomUUID()}::uuid, 'COMPLETED', '{}'::jsonb, NULL, NULL, NULL, NULL, 0, 0)`
          .execute(single)
          .catch(() => undefined);
        const other = await leasedTask();
        await sql`SELECT * FROM "nf_report_task"(${namespaceId}::uuid, ${other.workflowId}::uuid, ${other.taskId}::uuid, 'COMPLETED', '{}'::jsonb, NULL, NULL, 'w1', NULL, 0, 0)`.execute(single);
        expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", other.workflowId).execute()).toHaveLength(1);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(wakes.length).toBe(before);
      } finally {
        await single.destroy();
      }
    } finally {
      await listener.end();
    }
  });

  it("keeps a small output inline (no ref)", async () => {
    const { workflowId, taskId } = await leasedTask();
    const report = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "FAILED", output: { n: 1 }, reason: "nope" });
    expect(report).toMatchObject({ ok: true, outputRef: null });
    expect(await row(workflowId)).toMatchObject({ status: "FAILED", output: { n: 1 }, outputRef: null, reasonForIncompletion: "nope" });
  });

  it("stores an output holding a NUL (stripped), rather than failing the report", async () => {
    const { workflowId, taskId } = await leasedTask();
    const report = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output: { text: "a\u0000b", nested: { k: "\u0000" } } });
    expect(report.ok).toBe(true);
    expect((await row(workflowId)).output).toEqual({ text: "ab", nested: { k: "" } });
  });

  it("refuses a second completion of the same task, and deletes the blob the refused report wrote", async () => {
    const { workflowId, taskId } = await leasedTask();
    expect((await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output: { first: true } })).ok).toBe(true);
    const before = await blobFiles();
    const big = { blob: "y".repeat(OFFLOAD_THRESHOLD_BYTES + 1) };
    const second = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "FAILED", output: big });
    expect(second).toMatchObject({ ok: false, error: "not_in_progress", status: "COMPLETED", message: expect.stringMatching(/not in progress \(it is COMPLETED\)/) as unknown });
    expect(await blobFiles()).toEqual(before);
    expect(await row(workflowId)).toMatchObject({ status: "COMPLETED", output: { first: true }, outputRef: null });
  });

  it("answers without the ended task's input and output (the worker has them), and with the tasks its `next` leased whole", async () => {
    const workflowId = randomUUID();
    const queueName = `q-${randomUUID().slice(0, 8)}`;
    const [ending, following] = await insertTasks(t.db, [
      { workflowId, namespaceId, refName: "a", iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: queueName, queueName, input: { big: "x".repeat(10_000) } },
      { workflowId, namespaceId, refName: "b", iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: queueName, queueName, input: { k: 1 } },
    ]);
    await enqueueTask(t.db, { queueName, taskId: ending!.id, workflowId, namespaceId, taskType: "SIMPLE", priority: 0 });
    expect((await leaseTasks(t.db, { queueName, namespaceId, count: 1, leaseSeconds: 60, owner: "w1" })).map((l) => l.task.id)).toEqual([ending!.id]);
    await enqueueTask(t.db, { queueName, taskId: following!.id, workflowId, namespaceId, taskType: "SIMPLE", priority: 0 });

    const report = await reportTaskResult(
      { db: t.db, blobs },
      { namespaceId, workflowId, taskId: ending!.id, status: "COMPLETED", output: { n: 1 }, workerId: "w1", next: { count: 1, leaseSeconds: 60 } },
    );
    if (!report.ok) throw new Error(JSON.stringify(report));
    expect(report.task).toMatchObject({ id: ending!.id, status: "COMPLETED", queueName });
    expect(Object.keys(report.task)).not.toContain("input");
    expect(Object.keys(report.task)).not.toContain("output");
    expect(report.leased.map((l) => [l.task.id, l.task.input, l.task.status])).toEqual([[following!.id, { k: 1 }, "IN_PROGRESS"]]);
    // The row has them, as reported.
    const stored = await t.db.selectFrom("TaskExecutions").select(["input", "output"]).where("workflowId", "=", workflowId).where("id", "=", ending!.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ input: { big: "x".repeat(10_000) }, output: { n: 1 } });
  });

  it("answers the same report sent again (its answer was lost) as it answered the first, with the tasks its `next` leased", async () => {
    const { workflowId, taskId, queueName } = await leasedTask("w1");
    const queued = async () => {
      const wf = randomUUID();
      const [task] = await insertTasks(t.db, [{ workflowId: wf, namespaceId, refName: "b", iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: queueName, queueName }]);
      await enqueueTask(t.db, { queueName, taskId: task!.id, workflowId: wf, namespaceId, taskType: "SIMPLE", priority: 0 });
      return { workflowId: wf, taskId: task!.id };
    };
    const next = await queued();
    const other = await queued();
    const report = { namespaceId, workflowId, taskId, status: "COMPLETED", output: { n: 1 }, workerId: "w1", next: { count: 1, leaseSeconds: 60 } } as const;
    const first = await reportTaskResult({ db: t.db, blobs }, report);
    expect(first.ok && first.leased.map((l) => l.task.id)).toEqual([next.taskId]);
    // A poll of this worker's in between takes the other task: a replay must not hand that one over.
    expect((await leaseTasks(t.db, { queueName, namespaceId, count: 1, leaseSeconds: 60, owner: "w1" })).map((l) => l.task.id)).toEqual([other.taskId]);

    const again = await reportTaskResult({ db: t.db, blobs }, report);
    expect(again).toMatchObject({ ok: true, task: { id: taskId, status: "COMPLETED" }, outputRef: null });
    expect(again.ok && again.leased.map((l) => [l.task.id, l.queue.leaseOwner, l.queue.leaseReport])).toEqual([[next.taskId, "w1", taskId]]);
    // Handed over again, not leased again.
    expect((await row(next.workflowId)).pollCount).toBe(1);

    // Not the same report: another output, status or worker is refused as before.
    expect(await reportTaskResult({ db: t.db, blobs }, { ...report, output: { n: 2 } })).toMatchObject({ ok: false, error: "not_in_progress" });
    expect(await reportTaskResult({ db: t.db, blobs }, { ...report, status: "FAILED", reason: "x" })).toMatchObject({ ok: false, error: "not_in_progress" });
    expect(await reportTaskResult({ db: t.db, blobs }, { ...report, workerId: "w2" })).toMatchObject({ ok: false, error: "not_in_progress" });

    // Once the leased task is reported, a replay has nothing more to hand over.
    expect((await reportTaskResult({ db: t.db, blobs }, { namespaceId, ...next, status: "COMPLETED", workerId: "w1" })).ok).toBe(true);
    expect(await reportTaskResult({ db: t.db, blobs }, report)).toMatchObject({ ok: true, leased: [] });
  });

  it("answers a replayed offloaded report with the first attempt's blob, and deletes the retry's", async () => {
    const { workflowId, taskId } = await leasedTask("w1");
    const big = { blob: "z".repeat(OFFLOAD_THRESHOLD_BYTES + 1) };
    const first = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output: big, workerId: "w1" });
    const files = await blobFiles();
    const again = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output: big, workerId: "w1" });
    expect(again).toMatchObject({ ok: true, outputRef: first.ok ? first.outputRef : "?" });
    expect(await blobFiles()).toEqual(files);
  });

  it("refuses a worker that does not hold the task, and a task that does not exist", async () => {
    const { workflowId, taskId } = await leasedTask("w1");
    expect(await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", workerId: "w2" })).toMatchObject({ ok: false, error: "not_held" });
    expect(await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId: randomUUID(), status: "COMPLETED" })).toMatchObject({ ok: false, error: "not_found" });
    expect((await row(workflowId)).status).toBe("IN_PROGRESS");
  });

  it.each([
    ["an array", [1, 2], /must be a JSON object, got an array/],
    ["a string", "done", /must be a JSON object, got string/],
    ["a number", 42, /must be a JSON object, got number/],
    ["a Date", new Date(), /plain JSON object/],
    ["a BigInt inside", { n: 10n }, /not JSON/],
    ["a cycle", (() => { const o: Record<string, unknown> = {}; o.self = o; return o; })(), /not JSON/],
  ])("refuses %s as output and changes nothing", async (_name, output, why) => {
    const { workflowId, taskId } = await leasedTask();
    const report = await reportTaskResult({ db: t.db, blobs }, { namespaceId, workflowId, taskId, status: "COMPLETED", output });
    expect(report).toMatchObject({ ok: false, error: "invalid_output", message: expect.stringMatching(why) as unknown });
    expect((await row(workflowId)).status).toBe("IN_PROGRESS");
  });

  it("rolls the completion back with a failing in-transaction write, and deletes its blob", async () => {
    const { workflowId, taskId, queueName } = await leasedTask();
    const before = await blobFiles();
    await expect(
      reportTaskResult(
        { db: t.db, blobs },
        {
          namespaceId,
          workflowId,
          taskId,
          status: "COMPLETED",
          output: { blob: "z".repeat(OFFLOAD_THRESHOLD_BYTES + 1) },
          inTransaction: () => Promise.reject(new Error("outbox write failed")),
        },
      ),
    ).rejects.toThrow("outbox write failed");
    expect(await row(workflowId)).toMatchObject({ status: "IN_PROGRESS", outputRef: null });
    expect(await t.db.selectFrom("TaskQueues").select("id").where("queueName", "=", queueName).execute()).toHaveLength(1);
    expect(await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", workflowId).execute()).toEqual([]);
    expect(await blobFiles()).toEqual(before);
  });

  it("refuses to run inside a caller's transaction (the blob must be written before it)", async () => {
    await expect(
      t.db.transaction().execute((trx) => reportTaskResult({ db: trx, blobs }, { namespaceId, workflowId: randomUUID(), taskId: randomUUID(), status: "COMPLETED" })),
    ).rejects.toThrow(/opens its own transaction/);
  });
});
