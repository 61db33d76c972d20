import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import {
  TASK_DEFINITION_COLUMNS,
  getQueueGates,
  getTaskDefinition,
  queuesUsingSemaphore,
  upsertTaskDefinition,
} from "./task-definitions";
import type { TaskDefinitionInput } from "./task-definitions";

const t = useTestDatabase();

async function namespace(): Promise<string> {
  const row = await t.db
    .insertInto("Namespaces")
    .values({ name: `ns-${randomBytes(4).toString("hex")}` })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A value for every field, none of them the default. */
const everything: Required<TaskDefinitionInput> = {
  name: "charge_card",
  description: "charges a card",
  ownerEmail: "payments@example.com",
  retryCount: 7,
  retryLogic: "EXPONENTIAL_BACKOFF",
  retryDelaySeconds: 5,
  backoffScaleFactor: 3,
  timeoutPolicy: "RETRY",
  timeoutSeconds: 600,
  totalTimeoutSeconds: 3000,
  responseTimeoutSeconds: 120,
  pollTimeoutSeconds: 30,
  concurrentExecLimit: 4,
  rateLimitPerFrequency: 50,
  rateLimitFrequencyInSeconds: 60,
  semaphoreName: "card-network",
  inputKeys: ["amount", "card"],
  outputKeys: ["chargeId"],
  inputTemplate: { currency: "EUR" },
  inputSchema: { type: "object", required: ["amount"] },
  outputSchema: { type: "object" },
  secretOutputFields: ["card.number"],
  allowSecrets: true,
};

describe("upsertTaskDefinition", () => {
  it("names every column of the table it is meant to write (the seed's secretOutputFields lesson)", async () => {
    const { rows } = await sql<{ column: string }>`
      SELECT a.attname AS "column"
      FROM pg_attribute a
      WHERE a.attrelid = '"TaskDefinitions"'::regclass AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`.execute(t.db);
    const identity = ["id", "namespaceId", "name", "createdAt", "createdBy"];
    expect(rows.map((r) => r.column).filter((c) => !identity.includes(c)).sort()).toEqual([...TASK_DEFINITION_COLUMNS].sort());
  });

  it("stores every field, and reads it back", async () => {
    const ns = await namespace();
    const stored = await upsertTaskDefinition(t.db, { namespaceId: ns, definition: everything, actor: "alice" });
    const read = await getTaskDefinition(t.db, ns, "charge_card");
    expect(read).toEqual(stored);
    const { name, ...fields } = everything;
    expect(read).toMatchObject({ namespaceId: ns, name, createdBy: "alice", updatedBy: "alice", ...fields });
  });

  it("fills Conductor's defaults for what is left out", async () => {
    const ns = await namespace();
    const row = await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "plain" } });
    expect(row).toMatchObject({
      retryCount: 3,
      retryLogic: "FIXED",
      retryDelaySeconds: 60,
      backoffScaleFactor: 1,
      timeoutPolicy: "TIME_OUT_WF",
      timeoutSeconds: 0,
      totalTimeoutSeconds: 0,
      responseTimeoutSeconds: 3600,
      pollTimeoutSeconds: null,
      concurrentExecLimit: null,
      rateLimitPerFrequency: null,
      rateLimitFrequencyInSeconds: null,
      semaphoreName: null,
      inputKeys: [],
      inputTemplate: {},
      inputSchema: null,
    });
  });

  it("replaces the whole definition on a second upsert, keeping who created it and when", async () => {
    const ns = await namespace();
    const first = await upsertTaskDefinition(t.db, {
      namespaceId: ns,
      definition: everything,
      actor: "alice",
      now: new Date("2026-01-01T00:00:00Z"),
    });
    const second = await upsertTaskDefinition(t.db, {
      namespaceId: ns,
      definition: { name: "charge_card", retryCount: 1 },
      actor: "bob",
      now: new Date("2026-02-01T00:00:00Z"),
    });
    expect(second.id).toBe(first.id);
    expect(second).toMatchObject({
      createdBy: "alice",
      createdAt: new Date("2026-01-01T00:00:00Z"),
      updatedBy: "bob",
      updatedAt: new Date("2026-02-01T00:00:00Z"),
      retryCount: 1,
      // Left out of the replacement, so back to the defaults.
      concurrentExecLimit: null,
      semaphoreName: null,
      secretOutputFields: [],
      description: null,
    });
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS "n" FROM "TaskDefinitions" WHERE "namespaceId" = ${ns}`.execute(t.db);
    expect(rows[0]?.n).toBe(1);
  });

  it("strips a NUL from JSON it stores (through json())", async () => {
    const ns = await namespace();
    const row = await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "nul", inputTemplate: { a: "x\u0000y" } } });
    expect(row.inputTemplate).toEqual({ a: "xy" });
  });
});

describe("getQueueGates", () => {
  it("is null for a queue without a definition, and for one that sets no gate (0 and null both mean none)", async () => {
    const ns = await namespace();
    expect(await getQueueGates(t.db, ns, "nothing")).toBeNull();
    await upsertTaskDefinition(t.db, {
      namespaceId: ns,
      definition: { name: "zeros", concurrentExecLimit: 0, rateLimitPerFrequency: 0, rateLimitFrequencyInSeconds: 5 },
    });
    expect(await getQueueGates(t.db, ns, "zeros")).toBeNull();
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "nulls" } });
    expect(await getQueueGates(t.db, ns, "nulls")).toBeNull();
  });

  it("reads each gate, with a rate-limit window of 1 s when none is given", async () => {
    const ns = await namespace();
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: everything });
    expect(await getQueueGates(t.db, ns, "charge_card")).toEqual({
      rateLimit: { perFrequency: 50, frequencySeconds: 60 },
      concurrentExecLimit: 4,
      semaphoreName: "card-network",
    });
    await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name: "rated", rateLimitPerFrequency: 3 } });
    expect(await getQueueGates(t.db, ns, "rated")).toEqual({
      rateLimit: { perFrequency: 3, frequencySeconds: 1 },
      concurrentExecLimit: null,
      semaphoreName: null,
    });
  });

  it("is per namespace", async () => {
    const [a, b] = [await namespace(), await namespace()];
    await upsertTaskDefinition(t.db, { namespaceId: a, definition: { name: "q", concurrentExecLimit: 2 } });
    expect(await getQueueGates(t.db, a, "q")).not.toBeNull();
    expect(await getQueueGates(t.db, b, "q")).toBeNull();
  });
});

describe("queuesUsingSemaphore", () => {
  it("lists the namespace's definitions that name the semaphore", async () => {
    const ns = await namespace();
    for (const [name, semaphoreName] of [["b", "s"], ["a", "s"], ["c", "other"], ["d", null]] as const) {
      await upsertTaskDefinition(t.db, { namespaceId: ns, definition: { name, semaphoreName } });
    }
    expect(await queuesUsingSemaphore(t.db, ns, "s")).toEqual(["a", "b"]);
    expect(await queuesUsingSemaphore(t.db, await namespace(), "s")).toEqual([]);
  });
});
