import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import type { Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/pool";
import { createDb } from "../../db/pool";
import type { Database, WorkflowExecutionRow } from "../../db/schema";
import { backendPid, blockedBy } from "../../db/testing/lock-observation";
import { planWithoutSeqScans, tablesScannedInTransaction } from "../../db/testing/scan-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { claimAndLockWorkflows, claimAndLockWorkflowsThen, claimDecideBatch, decideQueueDepth, enqueueDecide, lockWorkflow } from "./decide-queues";
import { claimedFrontiersStatement, frontiersByWorkflow, insertTasks } from "./task-executions";
import { insertWorkflowExecution } from "./workflow-executions";

const t = useTestDatabase();
/** A wider pool than useTestDatabase's 5: the claimer runs hold 3 transactions plus an observer. */
let wide: Db;
beforeAll(() => {
  wide = createDb(t.url, { max: 8 });
});
afterAll(async () => {
  await wide?.destroy();
});

async function pending(workflowId: string) {
  return t.db.selectFrom("DecideQueues").selectAll().where("workflowId", "=", workflowId).executeTakeFirst();
}

/** A deferred the test resolves to let a held-open transaction proceed. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

async function clearQueue(): Promise<void> {
  await t.db.deleteFrom("DecideQueues").execute();
}

/** Another transaction locking the workflow's row, left running; its backend pid is known when this resolves. */
async function lockFromAnotherTransaction(workflowId: string): Promise<{ pid: number; locked: Promise<WorkflowExecutionRow | undefined> }> {
  let pid = 0;
  const pidKnown = gate();
  const locked = t.db.transaction().execute(async (trx) => {
    pid = await backendPid(trx);
    pidKnown.open();
    return lockWorkflow(trx, workflowId);
  });
  await pidKnown.wait;
  return { pid, locked };
}

describe("enqueueDecide", () => {
  it("collapses repeated enqueues into one row, keeping its place in the queue", async () => {
    await clearQueue();
    const workflowId = randomUUID();
    const namespaceId = randomUUID();
    await enqueueDecide(t.db, { workflowId, namespaceId, reason: "started" });
    const first = await pending(workflowId);
    await enqueueDecide(t.db, { workflowId, namespaceId, reason: "task completed" });
    const second = await pending(workflowId);
    expect(second?.reason).toBe("task completed");
    expect(second?.enqueuedAt).toEqual(first?.enqueuedAt);
    expect(await decideQueueDepth(t.db)).toBe(1);
  });
});

describe("claimDecideBatch", () => {
  it("claims oldest first and deletes what it claims; a rollback puts the claim back", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const workflowId of ids) await enqueueDecide(t.db, { workflowId, namespaceId, reason: "r" });

    await expect(
      t.db.transaction().execute(async (trx) => {
        expect(await claimDecideBatch(trx, { limit: 2 })).toEqual(ids.slice(0, 2));
        expect(await decideQueueDepth(trx)).toBe(1);
        throw new Error("evaluation failed");
      }),
    ).rejects.toThrow("evaluation failed");
    expect(await decideQueueDepth(t.db)).toBe(3);

    const claimed = await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 10 }));
    expect(claimed).toEqual(ids);
    expect(await decideQueueDepth(t.db)).toBe(0);
  });

  it("refuses to run outside a transaction and rejects a bad limit", async () => {
    await expect(claimDecideBatch(t.db as unknown as Transaction<Database>, { limit: 1 })).rejects.toThrow(/inside/);
    await expect(t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 0 }))).rejects.toThrow(RangeError);
  });

  it("an offset claim does not hide the rows before it from other deciders (SQL OFFSET would lock them)", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const ids = Array.from({ length: 30 }, () => randomUUID());
    for (const workflowId of ids) await enqueueDecide(t.db, { workflowId, namespaceId, reason: "r" });

    const hold = gate();
    const started = gate();
    const spread = t.db.transaction().execute(async (trx) => {
      const mine = await claimDecideBatch(trx, { limit: 5, offset: 10 });
      started.open();
      await hold.wait;
      return mine;
    });
    await started.wait;
    // A decider at the head sees rows 0..9 even while the other holds 10..14.
    const head = await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 10 }));
    hold.open();
    expect(await spread).toEqual(ids.slice(10, 15));
    expect(head).toEqual(ids.slice(0, 10));

    // The trap the implementation avoids, shown on the raw statement: with SQL
    // OFFSET the skipped rows are locked too, and hidden from everyone else.
    const holdRaw = gate();
    const startedRaw = gate();
    const raw = t.db.transaction().execute(async (trx) => {
      await sql`SELECT "workflowId" FROM "DecideQueues" ORDER BY "enqueuedAt" LIMIT 2 OFFSET 5 FOR UPDATE SKIP LOCKED`.execute(trx);
      startedRaw.open();
      await holdRaw.wait;
    });
    await startedRaw.wait;
    const afterRaw = await t.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ workflowId: string }>`
        SELECT "workflowId" FROM "DecideQueues" ORDER BY "enqueuedAt" LIMIT 3 FOR UPDATE SKIP LOCKED`.execute(trx);
      return rows.map((r) => r.workflowId);
    });
    holdRaw.open();
    await raw;
    expect(afterRaw).toEqual(ids.slice(22, 25)); // rows 15..21 were locked by the OFFSET, not only 20..21
  });

  it("an offset past the tail, or a short stretch, fills the batch from the head", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const ids = Array.from({ length: 6 }, () => randomUUID());
    for (const workflowId of ids) await enqueueDecide(t.db, { workflowId, namespaceId, reason: "r" });
    expect(await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 3, offset: 50 }))).toEqual(ids.slice(0, 3));
    expect(await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 3, offset: 2 }))).toEqual(ids.slice(3, 6));
  });
});

describe("the core race (invariants 2 and 3)", () => {
  it("an enqueue that arrives while a claim is in flight waits for it, then leaves a pending row", async () => {
    await clearQueue();
    const workflowId = randomUUID();
    const namespaceId = randomUUID();
    await enqueueDecide(t.db, { workflowId, namespaceId, reason: "started" });

    const claimed = gate();
    const deciderMayCommit = gate();
    let deciderPid = 0;
    const decider = t.db.transaction().execute(async (trx) => {
      deciderPid = await backendPid(trx);
      const ids = await claimDecideBatch(trx, { limit: 10 });
      claimed.open();
      await deciderMayCommit.wait; // … evaluating state that predates the completion …
      return ids;
    });
    await claimed.wait;

    let completionPid = 0;
    const pidKnown = gate();
    const completion = t.db.transaction().execute(async (trx) => {
      completionPid = await backendPid(trx);
      pidKnown.open();
      await enqueueDecide(trx, { workflowId, namespaceId, reason: "task completed" });
    });
    await pidKnown.wait;
    await blockedBy(t.db, completionPid, deciderPid); // the enqueue serialises on the claimed row
    deciderMayCommit.open();

    expect(await decider).toEqual([workflowId]);
    await completion;
    expect((await pending(workflowId))?.reason).toBe("task completed");
  });

  it("an enqueue waiting on a claim that rolls back keeps the (restored) row pending", async () => {
    await clearQueue();
    const workflowId = randomUUID();
    const namespaceId = randomUUID();
    await enqueueDecide(t.db, { workflowId, namespaceId, reason: "started" });

    const claimed = gate();
    const deciderMayFinish = gate();
    let deciderPid = 0;
    const decider = t.db.transaction().execute(async (trx) => {
      deciderPid = await backendPid(trx);
      await claimDecideBatch(trx, { limit: 10 });
      claimed.open();
      await deciderMayFinish.wait;
      throw new Error("decider crashed");
    });
    await claimed.wait;
    let completionPid = 0;
    const pidKnown = gate();
    const completion = t.db.transaction().execute(async (trx) => {
      completionPid = await backendPid(trx);
      pidKnown.open();
      await enqueueDecide(trx, { workflowId, namespaceId, reason: "task completed" });
    });
    await pidKnown.wait;
    await blockedBy(t.db, completionPid, deciderPid);
    deciderMayFinish.open();
    await expect(decider).rejects.toThrow("decider crashed");
    await completion;
    expect((await pending(workflowId))?.reason).toBe("task completed");
    expect(await decideQueueDepth(t.db)).toBe(1);
  });

  it("a claim that arrives while an enqueue is uncommitted skips the row, which stays pending", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const existing = randomUUID(); // pending already: the enqueue updates it
    const fresh = randomUUID(); // not pending yet: the enqueue inserts it
    await enqueueDecide(t.db, { workflowId: existing, namespaceId, reason: "started" });

    const enqueued = gate();
    const completionMayCommit = gate();
    const completion = t.db.transaction().execute(async (trx) => {
      await enqueueDecide(trx, { workflowId: existing, namespaceId, reason: "task completed" });
      await enqueueDecide(trx, { workflowId: fresh, namespaceId, reason: "task completed" });
      enqueued.open();
      await completionMayCommit.wait;
    });
    await enqueued.wait;
    // Neither row is claimable: one is locked by the update, the other uncommitted.
    const claimed = await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 10 }));
    completionMayCommit.open();
    await completion;
    expect(claimed).toEqual([]);
    expect((await pending(existing))?.reason).toBe("task completed");
    expect((await pending(fresh))?.reason).toBe("task completed");
  });

  it("why not DO NOTHING: the same interleaving with DO NOTHING loses the evaluation", async () => {
    await clearQueue();
    const workflowId = randomUUID();
    const namespaceId = randomUUID();
    await enqueueDecide(t.db, { workflowId, namespaceId, reason: "started" });

    const enqueued = gate();
    const completionMayCommit = gate();
    const completion = t.db.transaction().execute(async (trx) => {
      await sql`INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "reason")
                VALUES (${workflowId}, ${namespaceId}, 'task completed') ON CONFLICT ("workflowId") DO NOTHING`.execute(trx);
      enqueued.open();
      await completionMayCommit.wait;
    });
    await enqueued.wait;
    // Nothing locked the row, so the decider claims it and evaluates state
    // without the uncommitted completion …
    const claimed = await t.db.transaction().execute((trx) => claimDecideBatch(trx, { limit: 10 }));
    completionMayCommit.open();
    await completion;
    expect(claimed).toEqual([workflowId]);
    // … and once the completion commits, nothing is left to evaluate it.
    expect(await pending(workflowId)).toBeUndefined();
  });
});

describe("several deciders over one queue", () => {
  const ROWS = 3_000;
  const LIMIT = 50;

  async function fill(): Promise<string[]> {
    await clearQueue();
    // Distinct, increasing "enqueuedAt" (one microsecond apart) so the order is total.
    const { rows } = await sql<{ workflowId: string }>`
      INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "enqueuedAt", "reason")
      SELECT uuidv7(), ${randomUUID()}::uuid, now() + make_interval(secs => i / 1e6), 'bulk'
      FROM generate_series(1, ${ROWS}) AS i
      RETURNING "workflowId"`.execute(t.db);
    return rows.map((r) => r.workflowId);
  }

  interface ClaimerStats {
    ids: string[];
    batches: number;
    shortBatches: number;
    claimMs: number[];
  }

  /** One decider: claim a batch, hold it through a 2 ms "evaluation", commit; until the queue reads empty. */
  async function claimer(offset: number): Promise<ClaimerStats> {
    const stats: ClaimerStats = { ids: [], batches: 0, shortBatches: 0, claimMs: [] };
    for (;;) {
      const batch = await wide.transaction().execute(async (trx) => {
        const started = performance.now();
        const ids = await claimDecideBatch(trx, { limit: LIMIT, offset });
        stats.claimMs.push(performance.now() - started);
        if (ids.length > 0) await sql`SELECT pg_sleep(0.002)`.execute(trx);
        return ids;
      });
      if (batch.length === 0) return stats;
      stats.batches++;
      if (batch.length < LIMIT) stats.shortBatches++;
      stats.ids.push(...batch);
    }
  }

  /** Samples pg_stat_activity until stopped: how often was any backend of this database waiting on a lock? */
  function watchLockWaits(): { stop(): Promise<{ samples: number; waiting: number }> } {
    let running = true;
    const result = { samples: 0, waiting: 0 };
    const loop = (async () => {
      while (running) {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS "n" FROM pg_stat_activity
          WHERE "datname" = current_database() AND "wait_event_type" = 'Lock'`.execute(t.db);
        result.samples++;
        if ((rows[0]?.n ?? 0) > 0) result.waiting++;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
        return result;
      },
    };
  }

  function percentile(values: number[], p: number): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  }

  for (const strategy of [
    { name: "SKIP LOCKED only (offset 0 for all)", offsets: [0, 0, 0] },
    { name: "spread starts (offset = index × limit)", offsets: [0, LIMIT, 2 * LIMIT] },
  ]) {
    it(`3 concurrent claimers over ${ROWS} rows claim each row exactly once — ${strategy.name}`, async () => {
      const all = await fill();
      const started = performance.now();
      const watch = watchLockWaits();
      const results = await Promise.all(strategy.offsets.map((offset) => claimer(offset)));
      const elapsed = performance.now() - started;
      const lockWaits = await watch.stop();

      const claimed = results.flatMap((r) => r.ids);
      expect(claimed).toHaveLength(ROWS); // nothing claimed twice …
      expect(new Set(claimed)).toEqual(new Set(all)); // … and nothing missed
      expect(await decideQueueDepth(t.db)).toBe(0);
      // Every claimer got a share: SKIP LOCKED let none of them wait on another.
      for (const r of results) expect(r.ids.length).toBeGreaterThan(0);
      expect(lockWaits.waiting).toBe(0);

      const claimMs = results.flatMap((r) => r.claimMs);
      // The record behind the why-comment on claimDecideBatch.
      if (process.env.NODE_FLOW_MEASURE) console.info(
        `[decide-queue] ${strategy.name}: ${ROWS} rows in ${elapsed.toFixed(0)} ms; per claimer ` +
          results.map((r) => `${r.ids.length} rows/${r.batches} batches/${r.shortBatches} short`).join(", ") +
          `; claim p50 ${percentile(claimMs, 50).toFixed(2)} ms, p95 ${percentile(claimMs, 95).toFixed(2)} ms` +
          `; lock waits seen in ${lockWaits.waiting}/${lockWaits.samples} pg_stat_activity samples`,
      );
    });
  }

  // The seed's shape, for comparison only (NODE_FLOW_MEASURE=1): peek the head
  // without locking, then claim each peeked row by deleting it. Every decider
  // peeks the same rows, so most of its claims find the row already gone.
  it.runIf(process.env.NODE_FLOW_MEASURE)("baseline: peek-then-claim without SKIP LOCKED (measurement only)", async () => {
    await fill();
    const started = performance.now();
    const watch = watchLockWaits();
    const results = await Promise.all(
      [0, 1, 2].map(async () => {
        let won = 0;
        let lost = 0;
        for (;;) {
          const peeked = await sql<{ workflowId: string }>`
            SELECT "workflowId" FROM "DecideQueues" ORDER BY "enqueuedAt" LIMIT ${LIMIT}`.execute(wide);
          if (peeked.rows.length === 0) return { won, lost };
          await wide.transaction().execute(async (trx) => {
            for (const { workflowId } of peeked.rows) {
              const r = await sql`DELETE FROM "DecideQueues" WHERE "workflowId" = ${workflowId}`.execute(trx);
              if (Number(r.numAffectedRows ?? 0n) === 1) won++;
              else lost++;
            }
            await sql`SELECT pg_sleep(0.002)`.execute(trx);
          });
        }
      }),
    );
    const elapsed = performance.now() - started;
    const lockWaits = await watch.stop();
    console.info(
      `[decide-queue] peek-then-claim baseline: ${ROWS} rows in ${elapsed.toFixed(0)} ms; per claimer ` +
        results.map((r) => `${r.won} won/${r.lost} lost`).join(", ") +
        `; lock waits seen in ${lockWaits.waiting}/${lockWaits.samples} samples`,
    );
  });
});

describe("claimAndLockWorkflows", () => {
  const claimOne = async (trx: Parameters<typeof claimAndLockWorkflows>[0], offset = 0) => (await claimAndLockWorkflows(trx, { limit: 1, offset }))[0];

  it("claims the oldest request, deleting it, and returns its workflow locked; a rollback puts the claim back", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const [older, newer] = [
      await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 }),
      await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 }),
    ];
    await enqueueDecide(t.db, { workflowId: older.id, namespaceId, reason: "started" });
    await enqueueDecide(t.db, { workflowId: newer.id, namespaceId, reason: "later" });

    const holding = gate();
    const mayCommit = gate();
    let claimerPid = 0;
    const claimer = t.db.transaction().execute(async (trx) => {
      claimerPid = await backendPid(trx);
      const claim = await claimOne(trx);
      holding.open();
      await mayCommit.wait;
      return claim;
    });
    await holding.wait;
    // The claim is deleted (invisible to a second claimer, which takes the next one) and the row is locked.
    const second = await t.db.transaction().execute((trx) => claimOne(trx));
    expect(second).toMatchObject({ reason: "later", workflow: { id: newer.id } });
    const locker = await lockFromAnotherTransaction(older.id);
    await blockedBy(t.db, locker.pid, claimerPid);
    mayCommit.open();
    expect(await claimer).toMatchObject({ reason: "started", workflow: { id: older.id, status: "RUNNING", namespaceId } });
    expect((await locker.locked)?.id).toBe(older.id);
    expect(await decideQueueDepth(t.db)).toBe(0);

    await enqueueDecide(t.db, { workflowId: older.id, namespaceId, reason: "again" });
    await expect(
      t.db.transaction().execute(async (trx) => {
        expect((await claimOne(trx))?.workflow.id).toBe(older.id);
        throw new Error("evaluation failed");
      }),
    ).rejects.toThrow("evaluation failed");
    expect((await pending(older.id))?.reason).toBe("again");
  });

  it("claims several at once, oldest first, each with its reason and its row locked; a second claimer skips them all", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const workflows: { id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 });
      await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: `r${i}` });
      workflows.push(wf);
    }
    const holding = gate();
    const mayCommit = gate();
    let claimerPid = 0;
    const claimer = t.db.transaction().execute(async (trx) => {
      claimerPid = await backendPid(trx);
      const claims = await claimAndLockWorkflows(trx, { limit: 3 });
      holding.open();
      await mayCommit.wait;
      return claims;
    });
    await holding.wait;
    const rest = await t.db.transaction().execute((trx) => claimAndLockWorkflows(trx, { limit: 10 }));
    expect(rest.map((c) => [c.workflow.id, c.reason])).toEqual([3, 4].map((i) => [workflows[i]!.id, `r${i}`]));
    const locker = await lockFromAnotherTransaction(workflows[2]!.id);
    await blockedBy(t.db, locker.pid, claimerPid);
    mayCommit.open();
    expect((await claimer).map((c) => [c.workflow.id, c.reason])).toEqual([0, 1, 2].map((i) => [workflows[i]!.id, `r${i}`]));
    expect((await locker.locked)?.id).toBe(workflows[2]!.id);
    expect(await decideQueueDepth(t.db)).toBe(0);
  });

  it("drops the claim of a workflow that no longer exists and answers nothing, as for an empty queue; near the tail it claims from the head", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const gone = randomUUID();
    await enqueueDecide(t.db, { workflowId: gone, namespaceId, reason: "orphan" });
    expect(await t.db.transaction().execute((trx) => claimAndLockWorkflows(trx, { limit: 4 }))).toEqual([]);
    expect(await pending(gone)).toBeUndefined();
    expect(await t.db.transaction().execute((trx) => claimOne(trx))).toBeUndefined();

    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 });
    await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: "only" });
    expect((await t.db.transaction().execute((trx) => claimOne(trx, 5)))?.workflow.id).toBe(wf.id);
  });

  it("on the sidecar's pool (keyLookupsOnly), claims and locks without reading any table whole, however small", async () => {
    // A generic plan made on small partitions with statistics (the sidecar's
    // planner-statistics loop analyzes them early) read the month's whole
    // "WorkflowExecutions" partition on every claim, as it filled.
    await clearQueue();
    const namespaceId = randomUUID();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 });
      await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: `r${i}` });
      ids.push(wf.id);
    }
    await sql`ANALYZE "WorkflowExecutions", "DecideQueues"`.execute(t.db);
    const sidecar = createDb(t.url, { max: 1, applicationName: "claim-plan-test", keyLookupsOnly: true });
    try {
      const { claimed, readWhole } = await sidecar.transaction().execute(async (trx) => {
        const claims = await claimAndLockWorkflows(trx, { limit: 8 });
        return { claimed: claims.map((c) => c.workflow.id), readWhole: await tablesScannedInTransaction(trx) };
      });
      expect(claimed).toEqual(ids);
      expect(readWhole).toEqual([]);
    } finally {
      await sidecar.destroy();
    }
  });
});

describe("claimAndLockWorkflowsThen", () => {
  it("runs the statement sent behind the claim after every lock is held: a task committed while the claim waited is in the frontier", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const [waited, free] = [
      await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 }),
      await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 }),
    ];
    await enqueueDecide(t.db, { workflowId: waited.id, namespaceId, reason: "r0" });
    await enqueueDecide(t.db, { workflowId: free.id, namespaceId, reason: "r1" });
    const task = (workflowId: string, refName: string) => ({ workflowId, namespaceId, refName, iteration: 0, attempt: 0, taskType: "SIMPLE", taskDefName: "t", queueName: null });
    await insertTasks(t.db, [task(free.id, "before")]);

    // Another transaction holds the first workflow's row (as an evaluation in another lane would).
    const holding = gate();
    const mayCommit = gate();
    let holderPid = 0;
    const holder = t.db.transaction().execute(async (trx) => {
      holderPid = await backendPid(trx);
      await lockWorkflow(trx, waited.id);
      holding.open();
      await mayCommit.wait;
      await insertTasks(trx, [task(waited.id, "whileWaiting")]);
    });
    await holding.wait;
    let claimerPid = 0;
    const pidKnown = gate();
    const claimer = t.db.transaction().execute(async (trx) => {
      claimerPid = await backendPid(trx);
      pidKnown.open();
      return claimAndLockWorkflowsThen(trx, { limit: 8, then: claimedFrontiersStatement() });
    });
    await pidKnown.wait;
    await blockedBy(t.db, claimerPid, holderPid);
    mayCommit.open();
    await holder;
    const { claims, thenRows } = await claimer;
    expect(claims.map((c) => c.workflow.id)).toEqual([waited.id, free.id]);
    const frontiers = frontiersByWorkflow([waited.id, free.id], thenRows!);
    expect(frontiers.get(waited.id)?.map((r) => r.refName)).toEqual(["whileWaiting"]);
    expect(frontiers.get(free.id)?.map((r) => r.refName)).toEqual(["before"]);
    expect(await decideQueueDepth(t.db)).toBe(0);
  });

  it("sends nothing the statement behind could read when nothing was claimed, and the claim's setting does not outlive its transaction", async () => {
    await clearQueue();
    const namespaceId = randomUUID();
    const empty = await t.db.transaction().execute((trx) => claimAndLockWorkflowsThen(trx, { limit: 8, then: claimedFrontiersStatement() }));
    expect(empty).toEqual({ claims: [], thenRows: [] });

    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "claim", defVersion: 1 });
    await enqueueDecide(t.db, { workflowId: wf.id, namespaceId, reason: "r" });
    const single = createDb(t.url, { max: 1, applicationName: "claim-then-test" });
    try {
      const claimed = await single.transaction().execute((trx) => claimAndLockWorkflowsThen(trx, { limit: 8, then: claimedFrontiersStatement() }));
      expect(claimed.claims.map((c) => c.workflow.id)).toEqual([wf.id]);
      // The same connection, a new transaction: the claimed ids are gone with the one that set them.
      const { rows } = await sql<{ claimed: string | null }>`SELECT current_setting('node_flow.claimed', true) AS "claimed"`.execute(single);
      expect(rows[0]?.claimed ?? "").toBe("");
    } finally {
      await single.destroy();
    }
  });
});

describe("lockWorkflow", () => {
  it("returns the row locked; a second locker waits until the first commits; unknown ids are undefined", async () => {
    const namespaceId = randomUUID();
    const wf = await insertWorkflowExecution(t.db, { namespaceId, defName: "lock", defVersion: 1 });

    const locked = gate();
    const mayCommit = gate();
    let firstPid = 0;
    const first = t.db.transaction().execute(async (trx) => {
      firstPid = await backendPid(trx);
      const row = await lockWorkflow(trx, wf.id);
      locked.open();
      await mayCommit.wait;
      await trx.updateTable("WorkflowExecutions").set({ version: sql`"version" + 1` }).where("id", "=", wf.id).execute();
      return row;
    });
    await locked.wait;
    const second = await lockFromAnotherTransaction(wf.id);
    await blockedBy(t.db, second.pid, firstPid);
    mayCommit.open();
    expect((await first)?.version).toBe(0);
    expect((await second.locked)?.version).toBe(1); // sees the first's committed evaluation

    const pruned = await t.db.transaction().execute((trx) => lockWorkflow(trx, wf.id, { startedAt: wf.startedAt }));
    expect(pruned?.id).toBe(wf.id);
    expect(await t.db.transaction().execute((trx) => lockWorkflow(trx, randomUUID()))).toBeUndefined();
  });

  it("finds the row by id with one primary-key probe per partition, never a scan", async () => {
    const plan = await planWithoutSeqScans(t.db, sql`SELECT * FROM "WorkflowExecutions" WHERE "id" = ${randomUUID()}::uuid FOR UPDATE`);
    expect(plan).toMatch(/Index Scan using "?WorkflowExecutions_p\d+_pkey/);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it("prunes to the one partition holding the row when given its startedAt", async () => {
    const at = new Date().toISOString();
    const { rows } = await sql<{ "QUERY PLAN": string }>`
      EXPLAIN SELECT * FROM "WorkflowExecutions" WHERE "id" = ${randomUUID()}::uuid
        AND "startedAt" >= ${at}::timestamptz AND "startedAt" < ${at}::timestamptz + interval '1 millisecond'
      FOR UPDATE`.execute(t.db);
    const scans = rows.map((r) => r["QUERY PLAN"]).filter((line) => /Scan/.test(line));
    expect(scans).toHaveLength(1);
  });
});

// NODE_FLOW_MEASURE=1: what a lookup by id alone costs with a year of monthly partitions.
describe.runIf(process.env.NODE_FLOW_MEASURE)("lockWorkflow measurement", () => {
  it("locks by id across 12 months of partitions", async () => {
    const now = new Date();
    for (let back = 1; back <= 12; back++) {
      const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
      const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 1));
      const name = `WorkflowExecutions_p${from.getUTCFullYear()}${String(from.getUTCMonth() + 1).padStart(2, "0")}`;
      await sql`CREATE TABLE IF NOT EXISTS ${sql.id(name)} PARTITION OF "WorkflowExecutions"
        FOR VALUES FROM (${sql.lit(from.toISOString())}) TO (${sql.lit(to.toISOString())})`.execute(t.db);
      await sql`INSERT INTO "WorkflowExecutions" ("namespaceId", "defName", "defVersion", "startedAt")
        SELECT ${randomUUID()}::uuid, 'm', 1, ${from.toISOString()}::timestamptz + make_interval(secs => i)
        FROM generate_series(1, 2000) AS i`.execute(t.db);
    }
    await sql`ANALYZE "WorkflowExecutions"`.execute(t.db);
    const { rows: partitions } = await sql<{ n: number }>`
      SELECT count(*)::int AS "n" FROM pg_inherits WHERE "inhparent" = '"WorkflowExecutions"'::regclass`.execute(t.db);
    const sample = await t.db.selectFrom("WorkflowExecutions").select(["id", "startedAt"]).where("defName", "=", "m").limit(200).execute();
    const time = async (withStartedAt: boolean) => {
      const started = performance.now();
      await t.db.transaction().execute(async (trx) => {
        for (const row of sample) await lockWorkflow(trx, row.id, withStartedAt ? { startedAt: row.startedAt } : {});
      });
      return (performance.now() - started) / sample.length;
    };
    const roundTrip = async () => {
      const started = performance.now();
      await t.db.transaction().execute(async (trx) => {
        for (const _ of sample) await sql`SELECT 1`.execute(trx);
      });
      return (performance.now() - started) / sample.length;
    };
    const explain = async (withStartedAt: boolean) => {
      const row = sample[0]!;
      const at = row.startedAt.toISOString();
      const { rows } = withStartedAt
        ? await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, SUMMARY) SELECT * FROM "WorkflowExecutions" WHERE "id" = ${row.id}::uuid
            AND "startedAt" >= ${at}::timestamptz AND "startedAt" < ${at}::timestamptz + interval '1 millisecond' FOR UPDATE`.execute(t.db)
        : await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, SUMMARY) SELECT * FROM "WorkflowExecutions" WHERE "id" = ${row.id}::uuid FOR UPDATE`.execute(t.db);
      return rows.map((r) => r["QUERY PLAN"]).filter((l) => /Time:/.test(l)).join(", ");
    };
    await time(false); // warm
    const byId = await time(false);
    const pruned = await time(true);
    const baseline = await roundTrip();
    console.info(
      `[lockWorkflow] ${partitions[0]?.n} partitions: by id ${(byId * 1000).toFixed(0)} µs/lock, ` +
        `with startedAt ${(pruned * 1000).toFixed(0)} µs/lock; a bare SELECT 1 round trip ${(baseline * 1000).toFixed(0)} µs; ` +
        `server side by id: ${await explain(false)}; with startedAt: ${await explain(true)}`,
    );
  });
});
