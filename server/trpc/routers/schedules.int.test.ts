import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { fireDueScheduleBatch } from "../../schedules/fire-due-schedules";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import type { User } from "../../store/users";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

/**
 * The console's schedules procedures: the Triggers panel's list (next fire
 * times, last fires with their runs), a save refused field by field under
 * the form's own field names, the live preview, and a viewer who may look
 * but not change.
 */

const t = useTestDatabase();
let ns: string;
let editor: User;
let viewer: User;

beforeAll(async () => {
  ns = `sched-trpc-${Math.random().toString(16).slice(2, 8)}`;
  const id = (await insertNamespace(t.db, { name: ns })).id;
  editor = await insertTestUser(t.db, "sched-editor@example.test");
  viewer = await insertTestUser(t.db, "sched-viewer@example.test");
  await upsertNamespaceMember(t.db, { namespaceId: id, userId: editor.id, role: "editor" });
  await upsertNamespaceMember(t.db, { namespaceId: id, userId: viewer.id, role: "viewer" });
  const registered = await registerWorkflowDefinition(t.db, { namespaceId: id, definition: { schemaVersion: 1, name: "reports", nodes: [{ ref: "work", type: "SIMPLE", name: "reports_work", position: { x: 0, y: 0 } }], edges: [] } });
  if (!registered.ok) throw new Error("definition refused");
});

const as = (user: User) => callerAs(t.db, t.url, userPrincipal(user));

function fieldErrorsOf(error: unknown): Record<string, string[] | undefined> {
  expect(error).toBeInstanceOf(TRPCError);
  const cause = (error as TRPCError).cause;
  expect(cause).toBeInstanceOf(z.ZodError);
  return z.flattenError(cause as z.ZodError).fieldErrors;
}

describe("schedules", () => {
  it("lists a saved schedule with its next five fire times and its last fires", async () => {
    const saved = await as(editor).schedules.save({ namespace: ns, name: "every-second", config: { workflowName: "reports", cronExpression: "* * * * * *" } });
    expect(saved.created).toBe(true);
    await fireDueScheduleBatch({ db: t.db, now: () => new Date(Date.parse(saved.nextFireAt!) + 100) }, { limit: 10 });
    const [listed] = await as(viewer).schedules.list({ namespace: ns, workflowName: "reports" });
    expect(listed).toMatchObject({ name: "every-second", cronExpression: "* * * * * *", zoneId: "UTC" });
    expect(listed!.nextFireTimes).toHaveLength(5);
    expect(listed!.lastFires).toHaveLength(1);
    expect(listed!.lastFires[0]).toMatchObject({ outcome: "started", fireAt: saved.nextFireAt });
    expect(listed!.lastFires[0]!.workflowId).not.toBeNull();
  });

  it("refuses a bad save by the form's field names", async () => {
    const refused = await as(editor)
      .schedules.save({ namespace: ns, name: "broken", config: { workflowName: "reports", cronExpression: "61 * * * *", zoneId: "Atlantis/Capital" } })
      .catch((error: unknown) => error);
    expect(Object.keys(fieldErrorsOf(refused)).sort()).toEqual(["zoneId"]);
    const missing = await as(editor)
      .schedules.save({ namespace: ns, name: "broken", config: { workflowName: "nope", cronExpression: "61 * * * *" } })
      .catch((error: unknown) => error);
    expect(fieldErrorsOf(missing).cronExpression?.[0]).toContain("minute");
    const noWorkflow = await as(editor).schedules.save({ namespace: ns, name: "broken", config: { workflowName: "nope", cronExpression: "@daily" } }).catch((error: unknown) => error);
    expect(fieldErrorsOf(noWorkflow).workflowName?.[0]).toBe('There is no workflow "nope" in this namespace');
    expect(await as(viewer).schedules.list({ namespace: ns, workflowName: "nope" })).toEqual([]);
  });

  it("previews an expression, and answers a bad one with its problem", async () => {
    const ok = await as(viewer).schedules.preview({ namespace: ns, cronExpression: "0 9 * * MON-FRI", zoneId: "America/New_York", count: 3 });
    expect(ok.ok && ok.fireTimes).toHaveLength(3);
    const bad = await as(viewer).schedules.preview({ namespace: ns, cronExpression: "* * *", zoneId: "UTC", count: 3 });
    expect(bad).toMatchObject({ ok: false, problems: [{ path: ["cronExpression"] }] });
  });

  it("lets a viewer look but not pause or delete", async () => {
    const paused = await as(viewer).schedules.setPaused({ namespace: ns, name: "every-second", paused: true }).catch((error: unknown) => error);
    expect(paused).toBeInstanceOf(TRPCError);
    expect((paused as TRPCError).code).toBe("FORBIDDEN");
    expect((await as(editor).schedules.setPaused({ namespace: ns, name: "every-second", paused: true })).nextFireTimes).toEqual([]);
    expect(await as(editor).schedules.delete({ namespace: ns, name: "every-second" })).toEqual({ deleted: true });
    expect(await as(viewer).schedules.list({ namespace: ns })).toEqual([]);
  });
});
