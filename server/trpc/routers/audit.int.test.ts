import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import { actorOfPrincipal, authenticateApiKey, createApiKey } from "../../auth/api-keys";
import type { Principal } from "../../auth/principal";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { appendAuditEvent } from "../../store/audit-events";
import { upsertNamespaceMember } from "../../store/namespace-members";
import { insertNamespace } from "../../store/namespaces";
import type { User } from "../../store/users";
import { upsertTaskDefinition } from "../../definitions/upsert-task-definition";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

const t = useTestDatabase();
let alpha: string;
let beta: string;
let owner: User;
let admin: User;
let editor: User;
let adminKey: Principal;

const as = (principal: Principal) => callerAs(t.db, t.url, principal);
const isCode = (code: TRPCError["code"]) => (error: unknown) => error instanceof TRPCError && error.code === code;

const position = { x: 0, y: 0 };
const definition = (name: string) => ({ schemaVersion: 1, name, nodes: [{ ref: "only_step", type: "SIMPLE", name: "work", position }], edges: [] });

beforeAll(async () => {
  alpha = `audit-a-${randomUUID().slice(0, 6)}`;
  beta = `audit-b-${randomUUID().slice(0, 6)}`;
  const alphaId = (await insertNamespace(t.db, { name: alpha })).id;
  const betaId = (await insertNamespace(t.db, { name: beta })).id;
  owner = await insertTestUser(t.db, "audit-owner@example.test", { isOwner: true });
  admin = await insertTestUser(t.db, "audit-admin@example.test");
  editor = await insertTestUser(t.db, "audit-editor@example.test");
  await upsertNamespaceMember(t.db, { namespaceId: alphaId, userId: admin.id, role: "admin" });
  await upsertNamespaceMember(t.db, { namespaceId: alphaId, userId: editor.id, role: "editor" });
  const { key } = await createApiKey(t.db, { namespaceId: alphaId, name: "release bot", scopes: ["admin"], createdBy: "test" });
  const keyPrincipal = await authenticateApiKey(t.db, key);
  if (!keyPrincipal) throw new Error("the key did not authenticate");
  adminKey = keyPrincipal;

  // Five versions by the editor, one by the key, a task definition by the admin; one change in beta.
  for (let i = 0; i < 5; i++) {
    await registerWorkflowDefinition(t.db, { namespaceId: alphaId, definition: definition("orders"), actor: actorOfPrincipal(userPrincipal(editor)) });
  }
  await registerWorkflowDefinition(t.db, { namespaceId: alphaId, definition: definition("refunds"), actor: actorOfPrincipal(adminKey) });
  await upsertTaskDefinition(t.db, { namespaceId: alphaId, definition: { name: "work" }, actor: actorOfPrincipal(userPrincipal(admin)) });
  await registerWorkflowDefinition(t.db, { namespaceId: betaId, definition: definition("beta_only"), actor: { type: "system", id: "test" } });
  // Cluster-level: belongs to no namespace.
  await appendAuditEvent(t.db, { namespaceId: null, actorType: "user", actorId: admin.id, action: "auth.signIn", resourceType: "user", resourceId: admin.id, details: { email: admin.email } });
});

describe("audit.list", () => {
  it("pages a namespace's events newest first by cursor, each once, with the actor named", async () => {
    const seen: { action: string; details: unknown; actor: { type: string; name: string | null } }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await as(userPrincipal(admin)).audit.list({ namespace: alpha, limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined && pages < 20);
    const all = await as(userPrincipal(admin)).audit.list({ namespace: alpha, limit: 200 });
    expect(all.nextCursor).toBeNull();
    expect(seen).toEqual(all.items);
    expect(new Set(all.items.map((e) => e.id)).size).toBe(all.items.length);

    const definitionEvents = all.items.filter((e) => e.action !== "apiKey.create");
    expect(definitionEvents.map((e) => [e.action, e.details, e.actor.type, e.actor.name])).toEqual([
      ["taskDefinition.upsert", { name: "work" }, "user", admin.email],
      ["workflowDefinition.create", { name: "refunds", version: 1 }, "apiKey", "release bot"],
      ...[5, 4, 3, 2, 1].map((version) => ["workflowDefinition.create", { name: "orders", version }, "user", editor.email]),
    ]);
    // Newest first, by the instant each was written.
    const times = all.items.map((e) => e.at);
    expect([...times].sort().reverse()).toEqual(times);
    // Nothing of beta's, nothing cluster-level.
    expect(all.items.some((e) => JSON.stringify(e.details).includes("beta_only") || e.action === "auth.signIn")).toBe(false);
  });

  it("filters by action prefix and by actor, and pages within the filter", async () => {
    const caller = as(adminKey);
    const first = await caller.audit.list({ namespace: alpha, limit: 4, actionPrefix: "workflowDefinition." });
    expect(first.items).toHaveLength(4);
    expect(first.nextCursor).not.toBeNull();
    const rest = await caller.audit.list({ namespace: alpha, limit: 4, actionPrefix: "workflowDefinition.", cursor: first.nextCursor ?? "" });
    expect(rest.items.map((e) => e.details)).toEqual([
      { name: "orders", version: 2 },
      { name: "orders", version: 1 },
    ]);
    expect(rest.nextCursor).toBeNull();

    const byEditor = await caller.audit.list({ namespace: alpha, actor: { type: "user", id: editor.id } });
    expect(byEditor.items.map((e) => e.action)).toEqual(Array<string>(5).fill("workflowDefinition.create"));
    expect((await caller.audit.list({ namespace: alpha, actionPrefix: "taskDefinition." })).items.map((e) => e.resourceId)).toEqual(["work"]);
  });

  it("refuses a non-admin (FORBIDDEN), another namespace (NOT_FOUND) and a forged cursor (BAD_REQUEST)", async () => {
    await expect(as(userPrincipal(editor)).audit.list({ namespace: alpha })).rejects.toSatisfy(isCode("FORBIDDEN"));
    await expect(as(userPrincipal(admin)).audit.list({ namespace: beta })).rejects.toSatisfy(isCode("NOT_FOUND"));
    await expect(as(adminKey).audit.list({ namespace: beta })).rejects.toSatisfy(isCode("NOT_FOUND"));
    await expect(as(userPrincipal(admin)).audit.list({ namespace: alpha, cursor: "not-a-cursor" })).rejects.toSatisfy(isCode("BAD_REQUEST"));
    await expect(as(userPrincipal(admin)).audit.list({ namespace: alpha, limit: 201 })).rejects.toSatisfy(isCode("BAD_REQUEST"));
  });
});

describe("audit.listInstance", () => {
  it("shows the owner the events of no namespace, and nobody else", async () => {
    const page = await as(userPrincipal(owner)).audit.listInstance({ limit: 50 });
    expect(page.items.map((e) => [e.action, e.actor.name])).toContainEqual(["auth.signIn", admin.email]);
    expect(page.items.some((e) => e.action.startsWith("workflowDefinition."))).toBe(false);
    await expect(as(userPrincipal(admin)).audit.listInstance({})).rejects.toSatisfy(isCode("FORBIDDEN"));
    await expect(as(adminKey).audit.listInstance({})).rejects.toSatisfy(isCode("FORBIDDEN"));
  });
});
