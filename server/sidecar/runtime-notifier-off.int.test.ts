import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { chain, simple, workflow } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL } from "../lib/notifier";
import { startInTestWorker } from "../testing/in-test-worker";
import type { TaskHandler } from "../testing/in-test-worker";
import { historyProblems, registerDefinition, startRuns, waitForWorkflowsToEnd } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import { waitUntil } from "../testing/wait-until";
import type { SidecarProcess } from "../testing/sidecar-process";

/**
 * NOTIFY is an optimisation, never a guarantee (invariant 7): with no
 * notification delivered at all, every run must still complete, on the
 * pollers' and loops' own intervals.
 *
 * "Off entirely" is made true at the source rather than by configuring each
 * process not to listen (which would test only the processes someone
 * remembered): every NOTIFY in this code base is a call to pg_notify —
 * unqualified, in repositories and in the trigger functions — and Postgres
 * resolves an unqualified name along search_path. With this database's
 * search_path set to public, pg_catalog, a public.pg_notify(text, text) that
 * records the call and sends nothing shadows the real one for every session
 * opened afterwards: the sidecar's, the worker's, this test's. A LISTEN
 * session on every channel proves nothing got through; the record proves the
 * writers did try (so the shadow was really in their way).
 */

/** Every channel anything raises; "node_flow_decide" is migration 0007's DecideQueues trigger. */
const CHANNELS = [TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL, "node_flow_decide"];

const t = useTestDatabase();
let db: Db;
let namespaceId: string;
let dataDir: string;
let blobs: FilesystemBlobStore;
let listener: pg.Client;
/** Payloads the listener received. */
const delivered: string[] = [];
let sidecar: SidecarProcess | undefined;

beforeAll(async () => {
  await sql.raw(`CREATE TABLE "TestSwallowedNotifications" ("channel" TEXT NOT NULL, "applicationName" TEXT)`).execute(t.db);
  await sql
    .raw(
      `CREATE FUNCTION "public"."pg_notify"(text, text) RETURNS void LANGUAGE sql VOLATILE AS $$
         INSERT INTO "public"."TestSwallowedNotifications" VALUES ($1, current_setting('application_name'))
       $$`,
    )
    .execute(t.db);
  // Only sessions opened from now on see it: so everything below opens its own.
  await sql.raw(`ALTER DATABASE "${t.name}" SET search_path = "$user", public, pg_catalog`).execute(t.db);

  db = createDb(t.url, { max: 10, applicationName: "notifier-off-test" });
  namespaceId = (await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-runtime-notifier-off-"));
  blobs = new FilesystemBlobStore({ root: path.join(dataDir, "blobs") });
  listener = new pg.Client({ connectionString: t.url, application_name: "notifier-off-listener" });
  await listener.connect();
  listener.on("notification", (message) => delivered.push(message.payload ?? ""));
  for (const channel of CHANNELS) await listener.query(`LISTEN "${channel}"`);
});

afterAll(async () => {
  await sidecar?.kill();
  await listener?.end();
  await db?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("with notifications off entirely", () => {
  it("every run still completes: the worker polls with no notifier, the sidecar's loops run on their intervals", { timeout: 90_000 }, async () => {
    // The shadow is live for new sessions: a NOTIFY here is recorded, not sent.
    await sql`SELECT pg_notify('node_flow_tasks', 'probe')`.execute(db);
    const probe = await sql<{ n: number }>`SELECT count(*)::int AS "n" FROM "TestSwallowedNotifications"`.execute(db);
    expect(probe.rows).toEqual([{ n: 1 }]);

    const queueName = "notifier_off_step";
    const name = await registerDefinition(
      db,
      namespaceId,
      workflow(
        [
          simple("a", { name: queueName, input: { index: "${workflow.input.index}" } }),
          simple("b", { name: queueName, input: { prev: "${a.output.n}" } }),
          simple("c", { name: queueName, input: { prev: "${b.output.n}" } }),
        ],
        chain("a", "b", "c"),
        { name: "runtime_notifier_off" },
      ),
    );
    const handler: TaskHandler = (task) => {
      const input = task.input as { index?: number; prev?: number };
      const n = task.refName === "a" ? Number(input.index) : task.refName === "b" ? Number(input.prev) * 10 : Number(input.prev) + 1;
      return { status: "COMPLETED", output: { n } };
    };
    // Its own switch too, as an operator would turn notifications off; the
    // shadow makes sure nothing else gets through either way.
    sidecar = startSidecar({ databaseUrl: t.url, dataDir, env: { NODE_FLOW_NOTIFICATIONS: "off" } });
    await sidecar.ready();
    const worker = startInTestWorker({ db, notifier: null, namespaceId, queueName, handler, concurrency: 4, recheckIntervalMs: 250 });
    let ids: string[] = [];
    try {
      ids = await startRuns({ db, blobs }, { namespaceId, name, count: 20 });
      await waitForWorkflowsToEnd(db, ids, { timeoutMs: 60_000, context: () => sidecar?.output().slice(-4000) ?? "" });
    } finally {
      await worker.stop();
    }
    expect(worker.refused).toEqual([]);
    expect(worker.errors).toEqual([]);

    const rows = await db.selectFrom("WorkflowExecutions").select(["id", "status", "input", "output"]).where("id", "in", ids).execute();
    expect(rows).toHaveLength(20);
    for (const row of rows) {
      expect(row, row.id).toMatchObject({ status: "COMPLETED", output: { n: (row.input as { index: number }).index * 10 + 1 } });
    }
    expect(await historyProblems(db, ids)).toEqual([]);

    // Nothing was delivered, though the writers tried to notify; and the
    // listener was live all along: the real pg_notify, named explicitly, reaches it.
    expect(delivered).toEqual([]);
    await sql`SELECT pg_catalog.pg_notify('node_flow_tasks', 'control')`.execute(db);
    await waitUntil(() => delivered.length > 0, { what: "the control notification", timeoutMs: 10_000 });
    expect(delivered).toEqual(["control"]);
    const { rows: swallowed } = await sql<{ channel: string; applicationName: string }>`
      SELECT DISTINCT "channel", "applicationName" FROM "TestSwallowedNotifications" ORDER BY 1, 2`.execute(db);
    // The sidecar's sessions ran into the shadow (its evaluations' WorkflowEvents trigger at least).
    expect(swallowed).toEqual(expect.arrayContaining([{ channel: "node_flow_workflow_events", applicationName: "node-flow-worker" }]));
    expect(await sidecar.stop(), sidecar.output()).toBe(0);
  });
});
