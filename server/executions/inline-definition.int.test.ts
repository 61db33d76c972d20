import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { FilesystemBlobStore } from "../lib/blob-store";
import { listLatestWorkflowDefinitions } from "../store/workflow-definitions";
import { ensureInlineDefinition, isInlineDefinitionName } from "./inline-definition";
import { startExecution } from "./start-execution";

const t = useTestDatabase();
let root: string;
let blobs: FilesystemBlobStore;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nf-inline-"));
  blobs = new FilesystemBlobStore({ root });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const child = (label: string) => ({
  schemaVersion: 1,
  name: "shipping",
  nodes: [{ ref: "label", type: "SIMPLE", name: label, position: { x: 0, y: 0 } }],
  edges: [],
});

async function namespace(): Promise<{ id: string; name: string }> {
  const name = `ns-${randomBytes(4).toString("hex")}`;
  return t.db.insertInto("Namespaces").values({ name }).returning(["id", "name"]).executeTakeFirstOrThrow();
}

it("stores an inline definition once under its content's name, archived, out of every list, and startable", async () => {
  const ns = await namespace();
  const first = await ensureInlineDefinition(t.db, ns.id, child("print_label"));
  const again = await ensureInlineDefinition(t.db, ns.id, child("print_label"));
  const other = await ensureInlineDefinition(t.db, ns.id, child("weigh_parcel"));
  expect(first).toEqual(again);
  expect(first.ok && other.ok && first.name !== other.name).toBe(true);
  if (!first.ok) throw new Error("not stored");
  expect(first.name).toMatch(/^shipping:inline-[0-9a-f]{16}$/);
  expect(isInlineDefinitionName(first.name)).toBe(true);
  expect(isInlineDefinitionName("shipping")).toBe(false);

  const rows = await t.db.selectFrom("WorkflowDefinitions").select(["name", "version", "archivedAt"]).where("namespaceId", "=", ns.id).execute();
  expect(rows).toHaveLength(2);
  expect(rows.every((r) => r.version === 1 && r.archivedAt !== null)).toBe(true);
  expect(await listLatestWorkflowDefinitions(t.db, { namespace: ns.name })).toEqual([]);

  const started = await startExecution({ db: t.db, blobs }, { namespaceId: ns.id, name: first.name, version: 1, input: {} });
  expect(started).toMatchObject({ ok: true, created: true });
});

it("says why an inline definition cannot run, and stores nothing", async () => {
  const ns = await namespace();
  const result = await ensureInlineDefinition(t.db, ns.id, { schemaVersion: 1, name: "broken", nodes: [{ ref: "a", type: "NO_SUCH_TYPE" }], edges: [] });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.message).toMatch(/^the inline workflow definition is not valid: /);
  expect(await t.db.selectFrom("WorkflowDefinitions").select("id").where("namespaceId", "=", ns.id).execute()).toEqual([]);
});
