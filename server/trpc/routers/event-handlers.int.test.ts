import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { putSecret, sealingKeysOf } from "../../secrets/secrets";
import { getEventHandler, recordEventExecution } from "../../store/event-handlers";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import type { User } from "../../store/users";
import { TEST_INSTANCE_SECRET } from "../../rest/testing/rest-fixtures";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/**
 * The console's Settings → Event handlers procedures: an editor adds,
 * changes and deletes event handlers and status listeners, refused field by
 * field under the form's own field names with nothing written; a viewer
 * reads them and a handler's executions but changes nothing.
 */

const t = useTestDatabase();
let ns: string;
let namespaceId: string;
let editor: User;
let viewer: User;

const startShipping = { action: "start_workflow" as const, start_workflow: { name: "shipping", input: { orderId: "${orderId}" } } };

beforeAll(async () => {
  ns = `events-trpc-${Math.random().toString(16).slice(2, 8)}`;
  namespaceId = (await insertNamespace(t.db, { name: ns })).id;
  editor = await insertTestUser(t.db, "events-editor@example.test");
  viewer = await insertTestUser(t.db, "events-viewer@example.test");
  await upsertNamespaceMember(t.db, { namespaceId, userId: editor.id, role: "editor" });
  await upsertNamespaceMember(t.db, { namespaceId, userId: viewer.id, role: "viewer" });
  const registered = await registerWorkflowDefinition(t.db, { namespaceId, definition: { schemaVersion: 1, name: "shipping", nodes: [{ ref: "work", type: "NOOP", position: { x: 0, y: 0 } }], edges: [] } });
  if (!registered.ok) throw new Error("definition refused");
  await putSecret(t.db, sealingKeysOf({ secret: TEST_INSTANCE_SECRET, previousSecrets: [] }), { namespaceId, name: "LISTENER_KEY", value: "k-1", actor: { type: "system", id: "test" }, updatedBy: "test" });
});

const as = (user: User) => callerAs(t.db, t.url, userPrincipal(user));

function fieldErrorsOf(error: unknown): Record<string, string[] | undefined> {
  expect(error).toBeInstanceOf(TRPCError);
  const cause = (error as TRPCError).cause;
  expect(cause).toBeInstanceOf(z.ZodError);
  return z.flattenError(cause as z.ZodError).fieldErrors;
}

describe("event handlers", () => {
  it("saves, lists and lists the executions of a handler", async () => {
    const saved = await as(editor).eventHandlers.save({ namespace: ns, isNew: true, name: "ship", event: "conductor:orders:ready", condition: "$.ok", actions: [startShipping], active: true });
    expect(saved).toMatchObject({ name: "ship", event: "conductor:orders:ready", active: true, created: true });
    const row = await getEventHandler(t.db, namespaceId, "ship");
    await recordEventExecution(t.db, { namespaceId, handlerId: row!.id, eventId: 41, event: "conductor:orders:ready", status: "SKIPPED", outcomes: [] });
    await recordEventExecution(t.db, { namespaceId, handlerId: row!.id, eventId: 42, event: "conductor:orders:ready", status: "COMPLETED", outcomes: [{ action: "start_workflow", ok: true, workflowId: "w-1" }] });

    const listed = await as(viewer).eventHandlers.list({ namespace: ns });
    expect(listed.map((h) => h.name)).toEqual(["ship"]);
    const executions = await as(viewer).eventHandlers.executions({ namespace: ns, name: "ship" });
    expect(executions.map((x) => [x.eventId, x.status])).toEqual([
      [42, "COMPLETED"],
      [41, "SKIPPED"],
    ]);
  });

  it("refuses a bad save by the form's field names and writes nothing", async () => {
    const missing = await as(editor)
      .eventHandlers.save({ namespace: ns, isNew: true, name: "broken", event: "conductor:orders:ready", actions: [{ action: "start_workflow", start_workflow: { name: "nowhere" } }] })
      .catch((error: unknown) => error);
    expect(fieldErrorsOf(missing).actions).toEqual(['There is no workflow "nowhere" in this namespace']);
    const shape = await as(editor)
      .eventHandlers.save({ namespace: ns, isNew: true, name: "bad name!", event: "no-source", actions: [] })
      .catch((error: unknown) => error);
    expect(Object.keys(fieldErrorsOf(shape)).sort()).toEqual(["actions", "event", "name"]);
    const taken = await as(editor)
      .eventHandlers.save({ namespace: ns, isNew: true, name: "ship", event: "conductor:other:ready", actions: [startShipping] })
      .catch((error: unknown) => error);
    expect((taken as TRPCError).code).toBe("CONFLICT");
    expect(fieldErrorsOf(taken).name).toEqual(["An event handler named ship already exists"]);
    expect(await getEventHandler(t.db, namespaceId, "broken")).toBeUndefined();
    expect((await getEventHandler(t.db, namespaceId, "ship"))!.event).toBe("conductor:orders:ready");
  });

  it("lets a viewer change nothing, and an editor delete", async () => {
    const refused = await as(viewer)
      .eventHandlers.save({ namespace: ns, name: "ship", event: "conductor:orders:ready", actions: [startShipping], active: false })
      .catch((error: unknown) => error);
    expect((refused as TRPCError).code).toBe("FORBIDDEN");
    await expect(as(viewer).eventHandlers.delete({ namespace: ns, name: "ship" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await getEventHandler(t.db, namespaceId, "ship"))!.active).toBe(true);
    await expect(as(editor).eventHandlers.delete({ namespace: ns, name: "ship" })).resolves.toEqual({ deleted: true });
    await expect(as(editor).eventHandlers.delete({ namespace: ns, name: "ship" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(as(viewer).eventHandlers.executions({ namespace: ns, name: "ship" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("status listeners", () => {
  it("saves a signed listener, refuses a bad one field by field, and deletes", async () => {
    const saved = await as(editor).statusListeners.save({ namespace: ns, name: "notify", url: "https://hooks.example.com/x", workflowName: "shipping", statuses: ["FAILED", "FAILED"], secretName: "LISTENER_KEY" });
    expect(saved).toMatchObject({ name: "notify", statuses: ["FAILED"], secretName: "LISTENER_KEY", enabled: true, created: true });
    const refused = await as(editor)
      .statusListeners.save({ namespace: ns, name: "broken", url: "ftp://hooks.example.com/x", workflowName: "nowhere", secretName: "NO_SUCH_KEY" })
      .catch((error: unknown) => error);
    expect(Object.keys(fieldErrorsOf(refused)).sort()).toEqual(["secretName", "url", "workflowName"]);
    expect((await as(viewer).statusListeners.list({ namespace: ns })).map((l) => l.name)).toEqual(["notify"]);
    await expect(as(viewer).statusListeners.delete({ namespace: ns, name: "notify" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(as(editor).statusListeners.delete({ namespace: ns, name: "notify" })).resolves.toEqual({ deleted: true });
    expect(await as(viewer).statusListeners.list({ namespace: ns })).toEqual([]);
  });
});
