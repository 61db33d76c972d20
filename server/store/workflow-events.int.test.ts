import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Database } from "../../db/schema";
import { backendPid, blockedBy } from "../../db/testing/lock-observation";
import { useTestDatabase } from "../../db/testing/test-database";
import { lockWorkflow } from "./decide-queues";
import { appendWorkflowEvents, readWorkflowEvents } from "./workflow-events";
import { insertWorkflowExecution } from "./workflow-executions";

const t = useTestDatabase();

async function newWorkflow(): Promise<{ workflowId: string; namespaceId: string }> {
  const namespaceId = randomUUID();
  const row = await insertWorkflowExecution(t.db, { namespaceId, defName: "events", defVersion: 1 });
  return { workflowId: row.id, namespaceId };
}

async function seqs(workflowId: string): Promise<number[]> {
  const rows = await t.db.selectFrom("WorkflowEvents").select("seq").where("workflowId", "=", workflowId).orderBy("seq").execute();
  return rows.map((r) => r.seq);
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe("appendWorkflowEvents", () => {
  it("numbers events 1..n in order and continues from the last one; data goes through json()", async () => {
    const wf = await newWorkflow();
    const first = await t.db.transaction().execute(async (trx) => {
      await lockWorkflow(trx, wf.workflowId);
      return appendWorkflowEvents(trx, wf, [
        { type: "WORKFLOW_STARTED", data: { input: "a\u0000b" } },
        { type: "TASK_SCHEDULED", refName: "t1", taskId: randomUUID(), status: "SCHEDULED" },
      ]);
    });
    expect(first.map((e) => [e.seq, e.type])).toEqual([
      [1, "WORKFLOW_STARTED"],
      [2, "TASK_SCHEDULED"],
    ]);
    expect(first[0]?.data).toEqual({ input: "ab" });
    expect(first[1]?.refName).toBe("t1");
    // Same transaction, same "at": the order lives in seq.
    expect(first[0]?.at).toEqual(first[1]?.at);

    const second = await t.db.transaction().execute(async (trx) => {
      await lockWorkflow(trx, wf.workflowId);
      return appendWorkflowEvents(trx, wf, [{ type: "TASK_COMPLETED" }]);
    });
    expect(second.map((e) => e.seq)).toEqual([3]);
    expect(await t.db.transaction().execute((trx) => appendWorkflowEvents(trx, wf, []))).toEqual([]);
  });

  it("leaves no gap behind a rolled-back append", async () => {
    const wf = await newWorkflow();
    await t.db.transaction().execute(async (trx) => {
      await lockWorkflow(trx, wf.workflowId);
      await appendWorkflowEvents(trx, wf, [{ type: "A" }]);
    });
    await expect(
      t.db.transaction().execute(async (trx) => {
        await lockWorkflow(trx, wf.workflowId);
        await appendWorkflowEvents(trx, wf, [{ type: "B" }, { type: "C" }]);
        throw new Error("evaluation failed");
      }),
    ).rejects.toThrow("evaluation failed");
    await t.db.transaction().execute(async (trx) => {
      await lockWorkflow(trx, wf.workflowId);
      await appendWorkflowEvents(trx, wf, [{ type: "D" }]);
    });
    expect(await seqs(wf.workflowId)).toEqual([1, 2]);
  });

  it("two appenders that each hold the row lock take turns: 1..n, no gap, no duplicate", async () => {
    const wf = await newWorkflow();
    const appended = gate();
    const firstMayCommit = gate();
    let firstPid = 0;
    const first = t.db.transaction().execute(async (trx) => {
      firstPid = await backendPid(trx);
      await lockWorkflow(trx, wf.workflowId);
      const rows = await appendWorkflowEvents(trx, wf, [{ type: "A1" }, { type: "A2" }, { type: "A3" }]);
      appended.open();
      await firstMayCommit.wait;
      return rows.map((r) => r.seq);
    });
    await appended.wait;

    let secondPid = 0;
    const pidKnown = gate();
    const second = t.db.transaction().execute(async (trx) => {
      secondPid = await backendPid(trx);
      pidKnown.open();
      await lockWorkflow(trx, wf.workflowId); // waits here, before reading max(seq)
      const rows = await appendWorkflowEvents(trx, wf, [{ type: "B1" }, { type: "B2" }]);
      return rows.map((r) => r.seq);
    });
    await pidKnown.wait;
    await blockedBy(t.db, secondPid, firstPid);
    firstMayCommit.open();

    expect(await first).toEqual([1, 2, 3]);
    expect(await second).toEqual([4, 5]);
    expect(await seqs(wf.workflowId)).toEqual([1, 2, 3, 4, 5]);
  });

  it("many concurrent lock-holding appenders produce one gap-free history", async () => {
    const wf = await newWorkflow();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.db.transaction().execute(async (trx) => {
          await lockWorkflow(trx, wf.workflowId);
          await appendWorkflowEvents(trx, wf, Array.from({ length: 5 }, (_, j) => ({ type: `E${i}.${j}` })));
        }),
      ),
    );
    expect(await seqs(wf.workflowId)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Each transaction's events stay contiguous and in their given order.
    const events = await readWorkflowEvents(t.db, wf.workflowId, { limit: 100 });
    for (let k = 0; k < 40; k += 5) {
      const batch = events.slice(k, k + 5).map((e) => e.type);
      const prefix = batch[0]!.split(".")[0]!;
      expect(batch).toEqual([0, 1, 2, 3, 4].map((j) => `${prefix}.${j}`));
    }
  });

  it("serialises appenders that forgot the row lock by taking it itself", async () => {
    const wf = await newWorkflow();
    const appended = gate();
    const firstMayCommit = gate();
    let firstPid = 0;
    const first = t.db.transaction().execute(async (trx) => {
      firstPid = await backendPid(trx);
      await appendWorkflowEvents(trx, wf, [{ type: "A" }]);
      appended.open();
      await firstMayCommit.wait;
    });
    await appended.wait;
    let secondPid = 0;
    const pidKnown = gate();
    const second = t.db.transaction().execute(async (trx) => {
      secondPid = await backendPid(trx);
      pidKnown.open();
      return appendWorkflowEvents(trx, wf, [{ type: "B" }]);
    });
    await pidKnown.wait;
    await blockedBy(t.db, secondPid, firstPid);
    firstMayCommit.open();
    await first;
    expect((await second).map((e) => e.seq)).toEqual([2]);
    expect(await seqs(wf.workflowId)).toEqual([1, 2]);
  });

  it("why the lock is the only guard: the primary key includes \"at\", so it accepts a duplicate seq", async () => {
    const wf = await newWorkflow();
    // What two unlocked appenders would do: both read max = 0 and write seq 1,
    // each in its own transaction, so each with its own now() as "at".
    for (const type of ["A", "B"]) {
      await t.db.transaction().execute((trx) =>
        trx.insertInto("WorkflowEvents").values({ workflowId: wf.workflowId, seq: 1, namespaceId: wf.namespaceId, type }).execute(),
      );
    }
    expect(await seqs(wf.workflowId)).toEqual([1, 1]); // no unique_violation: a forked history
  });

  it("refuses to append to a workflow that does not exist", async () => {
    await expect(
      t.db.transaction().execute((trx) => appendWorkflowEvents(trx, { workflowId: randomUUID(), namespaceId: randomUUID() }, [{ type: "A" }])),
    ).rejects.toThrow(/does not exist/);
  });

  it("is announced by the table's trigger at commit, once per statement, with the statement's highest seq", async () => {
    const wf = await newWorkflow();
    const listener = new pg.Client({ connectionString: t.url });
    await listener.connect();
    try {
      const received: string[] = [];
      listener.on("notification", (message) => {
        if (message.payload?.startsWith(wf.workflowId)) received.push(message.payload);
      });
      await listener.query('LISTEN "node_flow_workflow_events"');
      await t.db.transaction().execute(async (trx) => {
        await lockWorkflow(trx, wf.workflowId);
        await appendWorkflowEvents(trx, wf, [{ type: "A" }, { type: "B" }]);
        await listener.query("SELECT 1"); // a round trip on the listener: nothing has arrived before commit
        expect(received).toEqual([]);
      });
      const deadline = Date.now() + 5_000;
      while (received.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      await listener.query("SELECT 1"); // anything more would have arrived by now
      expect(received).toEqual([`${wf.workflowId}:2`]);
    } finally {
      await listener.end();
    }
  });

  it("refuses to run outside a transaction", async () => {
    const wf = await newWorkflow();
    await expect(appendWorkflowEvents(t.db as unknown as Transaction<Database>, wf, [{ type: "A" }])).rejects.toThrow(/transaction/);
  });
});

describe("readWorkflowEvents", () => {
  it("pages in seq order from a cursor, and reads one workflow only", async () => {
    const wf = await newWorkflow();
    const other = await newWorkflow();
    for (const target of [wf, other]) {
      await t.db.transaction().execute(async (trx) => {
        await lockWorkflow(trx, target.workflowId);
        await appendWorkflowEvents(trx, target, Array.from({ length: 7 }, (_, i) => ({ type: `E${i + 1}` })));
      });
    }
    const page1 = await readWorkflowEvents(t.db, wf.workflowId, { limit: 3 });
    const page2 = await readWorkflowEvents(t.db, wf.workflowId, { afterSeq: page1.at(-1)!.seq, limit: 3 });
    const page3 = await readWorkflowEvents(t.db, wf.workflowId, { afterSeq: page2.at(-1)!.seq, limit: 3 });
    expect([page1, page2, page3].map((p) => p.map((e) => e.seq))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(page3[0]?.type).toBe("E7");
    expect(page1.every((e) => e.workflowId === wf.workflowId)).toBe(true);
    expect(await readWorkflowEvents(t.db, wf.workflowId, { afterSeq: 7, limit: 10 })).toEqual([]);
    await expect(readWorkflowEvents(t.db, wf.workflowId, { limit: 0 })).rejects.toThrow(RangeError);
  });
});
