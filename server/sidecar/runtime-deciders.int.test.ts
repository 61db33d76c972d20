import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import { useTestDatabase } from "../../db/testing/test-database";
import { chain, simple, workflow } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { Notifier } from "../lib/notifier";
import { startInTestWorker } from "../testing/in-test-worker";
import type { TaskHandler } from "../testing/in-test-worker";
import { historyProblems, registerDefinition, startRuns, waitForWorkflowsToEnd } from "../testing/runtime-fixtures";
import { startSidecar } from "../testing/sidecar-process";
import type { SidecarProcess } from "../testing/sidecar-process";

/**
 * Two decider processes on one database never evaluate one workflow at once.
 *
 * What proves it. The final state cannot: WorkflowExecutions."version" is bumped
 * as "version" + 1, which re-reads the row under its lock, so even two
 * evaluations that overlapped would leave 1..n without a gap; and a scheduled
 * task whose insert is absorbed by ON CONFLICT leaves no trace. So the test
 * database gets test-only triggers that record, per committed transaction:
 * - each DecideQueues delete (a claim): workflow, transaction id, decider,
 *   and clock_timestamp() — taken while the DELETE runs, i.e. after the
 *   statement's snapshot was taken;
 * - each version bump: old and new version, transaction id, decider, and — from
 *   a DEFERRED constraint trigger, which runs inside COMMIT — the moment the
 *   transaction started committing;
 * - each WorkflowEvents insert: workflow, seq, transaction id.
 * Rolled-back transactions leave no record (their inserts roll back too), which
 * is right: they changed nothing.
 *
 * An evaluation is then the window [its claim, its commit], and for every
 * workflow these windows must not overlap. They cannot in a correct system: a
 * workflow has at most one DecideQueues row, a new enqueue waits on a row an
 * uncommitted claim deleted, so the next claim's snapshot must see a row
 * committed after the previous evaluation committed. If two deciders ever
 * claimed one workflow concurrently (or evaluated it without a claim), a claim
 * would fall inside another evaluation's window (or a bump would have no claim
 * in its transaction), and the test fails. The events check adds that each
 * evaluation's history is one contiguous block of seqs, in version order.
 *
 * Which decider did what: each sidecar gets PGOPTIONS="-c nodeflow.test_decider=X",
 * which libpq-compatible node-postgres sends as a session setting, and the
 * triggers read it back.
 */

const t = useTestDatabase();
let namespaceId: string;
let dataDir: string;
let blobs: FilesystemBlobStore;
let workerDb: Db;
let notifier: Notifier;
const sidecars: SidecarProcess[] = [];

const INSTRUMENTATION = [
  `CREATE TABLE "TestDecideClaims" ("workflowId" UUID NOT NULL, "txid" BIGINT NOT NULL, "decider" TEXT, "claimedAt" TIMESTAMPTZ NOT NULL)`,
  `CREATE FUNCTION "TestDecideClaims_record"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO "TestDecideClaims" VALUES (OLD."workflowId", pg_current_xact_id()::text::bigint,
       current_setting('nodeflow.test_decider', true), clock_timestamp());
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER "TestDecideClaims_record" AFTER DELETE ON "DecideQueues" FOR EACH ROW EXECUTE FUNCTION "TestDecideClaims_record"()`,
  `CREATE TABLE "TestVersionBumps" ("workflowId" UUID NOT NULL, "oldVersion" BIGINT NOT NULL, "newVersion" BIGINT NOT NULL,
     "txid" BIGINT NOT NULL, "decider" TEXT, "committingAt" TIMESTAMPTZ)`,
  `CREATE FUNCTION "TestVersionBumps_record"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO "TestVersionBumps" VALUES (NEW."id", OLD."version", NEW."version", pg_current_xact_id()::text::bigint,
       current_setting('nodeflow.test_decider', true), NULL);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER "TestVersionBumps_record" AFTER UPDATE ON "WorkflowExecutions" FOR EACH ROW
     WHEN (OLD."version" IS DISTINCT FROM NEW."version") EXECUTE FUNCTION "TestVersionBumps_record"()`,
  `CREATE FUNCTION "TestVersionBumps_stamp"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE "TestVersionBumps" SET "committingAt" = clock_timestamp()
     WHERE "txid" = NEW."txid" AND "workflowId" = NEW."workflowId" AND "newVersion" = NEW."newVersion";
     RETURN NULL;
   END $$`,
  `CREATE CONSTRAINT TRIGGER "TestVersionBumps_stamp" AFTER INSERT ON "TestVersionBumps"
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "TestVersionBumps_stamp"()`,
  `CREATE TABLE "TestEventWrites" ("workflowId" UUID NOT NULL, "seq" BIGINT NOT NULL, "txid" BIGINT NOT NULL)`,
  `CREATE FUNCTION "TestEventWrites_record"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO "TestEventWrites" VALUES (NEW."workflowId", NEW."seq", pg_current_xact_id()::text::bigint);
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER "TestEventWrites_record" AFTER INSERT ON "WorkflowEvents" FOR EACH ROW EXECUTE FUNCTION "TestEventWrites_record"()`,
];

beforeAll(async () => {
  namespaceId = (await t.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  for (const statement of INSTRUMENTATION) await sql.raw(statement).execute(t.db);
  dataDir = await mkdtemp(path.join(tmpdir(), "nf-runtime-deciders-"));
  blobs = new FilesystemBlobStore({ root: path.join(dataDir, "blobs") });
  workerDb = createDb(t.url, { max: 10, applicationName: "in-test-worker" });
  notifier = new Notifier({ connectionString: t.url, applicationName: "in-test-worker-notifier" });
  await notifier.start();
});

afterAll(async () => {
  for (const sidecar of sidecars) await sidecar.kill();
  await notifier?.close();
  await workerDb?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A timestamptz column as whole microseconds since the epoch: about 1.8e15, inside 2^53, so a JS number holds it exactly. */
const micros = (column: string) => sql`(extract(epoch FROM ${sql.ref(column)}) * 1000000)::bigint`;

interface Claim {
  workflowId: string;
  txid: number;
  decider: string | null;
  /** Microseconds since the epoch (a JS Date would drop the microseconds these windows are compared in). */
  claimedAt: number;
}
interface Bump {
  workflowId: string;
  oldVersion: number;
  newVersion: number;
  txid: number;
  decider: string | null;
  committingAt: number | null;
}

/** Every way the recorded evaluations of `ids` break mutual exclusion; empty when none does. */
async function exclusionProblems(db: Db, ids: readonly string[]): Promise<string[]> {
  const claims = (await sql<Claim>`
    SELECT "workflowId", "txid", "decider", ${micros("claimedAt")} AS "claimedAt" FROM "TestDecideClaims"
    WHERE "workflowId" = ANY (${[...ids]}::uuid[])`.execute(db)).rows;
  const bumps = (await sql<Bump>`
    SELECT "workflowId", "oldVersion", "newVersion", "txid", "decider", ${micros("committingAt")} AS "committingAt" FROM "TestVersionBumps"
    WHERE "workflowId" = ANY (${[...ids]}::uuid[]) ORDER BY "workflowId", "newVersion"`.execute(db)).rows;
  const eventTx = (await sql<{ workflowId: string; seq: number; txid: number }>`
    SELECT "workflowId", "seq", "txid" FROM "TestEventWrites"
    WHERE "workflowId" = ANY (${[...ids]}::uuid[]) ORDER BY "workflowId", "seq"`.execute(db)).rows;
  const versions = await db.selectFrom("WorkflowExecutions").select(["id", "version"]).where("id", "in", [...ids]).execute();

  const problems: string[] = [];
  for (const { id, version } of versions) {
    const mine = bumps.filter((b) => b.workflowId === id);
    const myClaims = claims.filter((c) => c.workflowId === id);
    // Versions 1..n, each bump +1 from the one before, each in its own transaction.
    if (mine.length !== Number(version) || mine.some((b, i) => Number(b.newVersion) !== i + 1 || Number(b.oldVersion) !== i)) {
      problems.push(`${id}: version ${version} but bumps ${mine.map((b) => `${b.oldVersion}->${b.newVersion}`).join(",")}`);
    }
    if (new Set(mine.map((b) => b.txid)).size !== mine.length) problems.push(`${id}: two bumps in one transaction`);
    let previousCommit: number | undefined;
    for (const bump of mine) {
      const own = myClaims.filter((c) => c.txid === bump.txid);
      if (own.length !== 1 || bump.committingAt === null) {
        problems.push(`${id} v${bump.newVersion}: ${own.length} claims in its transaction, committingAt ${bump.committingAt}`);
        continue;
      }
      const start = own[0]!.claimedAt;
      const end = bump.committingAt;
      if (previousCommit !== undefined && start <= previousCommit) problems.push(`${id} v${bump.newVersion}: claimed before v${bump.newVersion - 1} committed`);
      previousCommit = end;
      for (const other of myClaims) {
        if (other.txid !== bump.txid && other.claimedAt >= start && other.claimedAt <= end) {
          problems.push(`${id} v${bump.newVersion} (${bump.decider}): claimed by ${other.decider} (tx ${other.txid}) inside its evaluation`);
        }
      }
    }
    // Events: each transaction's seqs one contiguous block, blocks in version order (the start is version 0).
    const versionOfTx = new Map<number, number>(mine.map((b) => [b.txid, Number(b.newVersion)]));
    const events = eventTx.filter((e) => e.workflowId === id);
    const seen = new Set<number>();
    let lastVersion = -1;
    for (const [i, e] of events.entries()) {
      const v = versionOfTx.get(e.txid) ?? (i === 0 ? 0 : undefined);
      if (v === undefined) {
        problems.push(`${id} seq ${e.seq}: written by tx ${e.txid}, which bumped no version`);
        continue;
      }
      if (i === 0) versionOfTx.set(e.txid, 0);
      if (v < lastVersion || (seen.has(e.txid) && events[i - 1]?.txid !== e.txid)) problems.push(`${id} seq ${e.seq}: out of its evaluation's block (v${v} after v${lastVersion})`);
      seen.add(e.txid);
      lastVersion = v;
    }
  }
  return problems;
}

describe("two decider processes", () => {
  it("complete 50 runs between them, never evaluating one workflow at once", { timeout: 90_000 }, async () => {
    const queueName = "two_deciders_step";
    const name = await registerDefinition(
      t.db,
      namespaceId,
      workflow(
        [
          simple("a", { name: queueName, input: { index: "${workflow.input.index}" } }),
          simple("b", { name: queueName, input: { prev: "${a.output.n}" } }),
          simple("c", { name: queueName, input: { prev: "${b.output.n}" } }),
        ],
        chain("a", "b", "c"),
        { name: "runtime_two_deciders" },
      ),
    );
    const handler: TaskHandler = (task) => {
      const input = task.input as { index?: number; prev?: number };
      const n = task.refName === "a" ? Number(input.index) : task.refName === "b" ? Number(input.prev) * 10 : Number(input.prev) + 1;
      return { status: "COMPLETED", output: { n } };
    };
    for (const label of ["A", "B"]) {
      sidecars.push(startSidecar({ databaseUrl: t.url, dataDir, roles: "decider", env: { PGOPTIONS: `-c nodeflow.test_decider=${label}` } }));
    }
    await Promise.all(sidecars.map((s) => s.ready()));
    const worker = startInTestWorker({ db: workerDb, notifier, namespaceId, queueName, handler, concurrency: 8 });
    let ids: string[] = [];
    try {
      ids = await startRuns({ db: t.db, blobs }, { namespaceId, name, count: 50 });
      await waitForWorkflowsToEnd(t.db, ids, { timeoutMs: 60_000, context: () => sidecars.map((s) => s.output().slice(-3000)).join("\n---\n") });
    } finally {
      await worker.stop();
    }
    expect(worker.refused).toEqual([]);
    expect(worker.errors).toEqual([]);

    const rows = await t.db.selectFrom("WorkflowExecutions").select(["id", "status", "input", "output"]).where("id", "in", ids).execute();
    for (const row of rows) {
      expect(row, row.id).toMatchObject({ status: "COMPLETED", output: { n: (row.input as { index: number }).index * 10 + 1 } });
    }
    expect(await historyProblems(t.db, ids)).toEqual([]);
    expect(await exclusionProblems(t.db, ids)).toEqual([]);

    // Both deciders really took part, and shared workflows over their lives —
    // otherwise there was no contention to prove anything about.
    const byDecider = (await sql<{ decider: string | null; evaluations: number; workflows: number }>`
      SELECT "decider", count(*)::int AS "evaluations", count(DISTINCT "workflowId")::int AS "workflows"
      FROM "TestVersionBumps" GROUP BY "decider" ORDER BY "decider"`.execute(t.db)).rows;
    expect(byDecider.map((r) => r.decider)).toEqual(["A", "B"]);
    const shared = (await sql<{ n: number }>`
      SELECT count(*)::int AS "n" FROM (SELECT "workflowId" FROM "TestVersionBumps" GROUP BY "workflowId" HAVING count(DISTINCT "decider") = 2) AS "s"`.execute(t.db)).rows[0]!.n;
    expect(shared, JSON.stringify(byDecider)).toBeGreaterThan(0);

    for (const sidecar of sidecars) expect(await sidecar.stop(), sidecar.output()).toBe(0);
  });
});
