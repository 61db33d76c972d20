import path from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HumanTaskRow, MemberRole } from "../../db/schema";
import { node, workflow } from "../../engine/definition/test-fixtures";
import { createApiKey } from "../auth/api-keys";
import { updateConductorTask } from "../conductor/conductor-task-protocol";
import { ConductorError } from "../conductor/conductor-error";
import { INBOX_CHANNEL, Notifier } from "../lib/notifier";
import { inboxStream } from "../realtime/inbox-stream";
import { serveInboxStream } from "../realtime/stream-routes";
import { startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness } from "../rest/testing/rest-fixtures";
import { startExecution } from "../executions/start-execution";
import { callerAs, insertTestUser, userPrincipal, useWebEnvironment } from "../trpc/testing";
import type { User } from "../store/users";
import { useActionHarness } from "../executions/actions/action-test-harness";

/**
 * The same human-task rules reached by every door: tRPC (the inbox UI, and
 * the operator's executions.completeTask), REST (/human-tasks and the run
 * signal), Conductor's task update, and the inbox's SSE stream.
 */

const h = useActionHarness();
useWebEnvironment(h.t);

let namespace = "";
let rest: RestHarness;
beforeAll(async () => {
  namespace = (await h.t.db.selectFrom("Namespaces").select("name").where("id", "=", h.namespaceId).executeTakeFirstOrThrow()).name;
  rest = await startRestHarness(h.t.db, h.t.url);
});
afterAll(async () => {
  await rest.close();
});

async function member(role: MemberRole = "viewer"): Promise<User> {
  const user = await insertTestUser(h.t.db, `m-${randomUUID().slice(0, 8)}@example.com`);
  await h.t.db.insertInto("NamespaceMembers").values({ namespaceId: h.namespaceId, userId: user.id, role }).execute();
  return user;
}

/** An admin-scope key acting for `user` (so the routes let it in; the rules then see the user). */
async function keyFor(user: User | null): Promise<{ id: string; key: string }> {
  return createApiKey(h.t.db, { namespaceId: h.namespaceId, name: `k-${randomUUID().slice(0, 8)}`, scopes: ["admin"], userId: user?.id ?? null, createdBy: "test" });
}

const as = (user: User) => callerAs(h.t.db, h.t.url, userPrincipal(user));

async function open(nodes: Record<string, unknown>[], starter?: User): Promise<{ runId: string; item: HumanTaskRow }> {
  const name = await h.register(workflow(nodes));
  const started = await startExecution({ db: h.t.db, blobs: h.blobs }, { namespaceId: h.namespaceId, name, input: { who: "ann" }, createdBy: starter === undefined ? null : `user:${starter.id}` });
  if (!started.ok) throw new Error(JSON.stringify(started));
  await h.evaluate();
  const item = await h.t.db.selectFrom("HumanTasks").selectAll().where("workflowId", "=", started.workflowId).executeTakeFirstOrThrow();
  return { runId: started.workflowId, item };
}

async function trpcError(call: Promise<unknown>): Promise<TRPCError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw error;
  }
  throw new Error("expected a TRPCError");
}

const form = {
  schema: { type: "object", required: ["amount"], properties: { amount: { type: "integer", minimum: 1 }, requester: { type: "string" } } },
  uiSchema: { requester: { "ui:readonly": true } },
};

describe("tRPC humanTasks", () => {
  it("inbox, counts, get, claim, submit — with the contract's error codes", async () => {
    const ann = await member();
    const bob = await member();
    const { item } = await open([node("HUMAN", "approve", { title: "Pay ${workflow.input.who}", form, input: { requester: "${workflow.input.who}" }, dueIn: "1h" })]);
    const inbox = await as(ann).humanTasks.inbox({ namespace, view: "unclaimed" });
    expect(inbox.items.find((i) => i.id === item.id)).toMatchObject({ title: "Pay ann", status: "PENDING", assignee: { kind: "anyone", id: null }, overdue: false, approvalsRequired: 1, approvalsGiven: 0 });
    expect((await as(ann).humanTasks.counts({ namespace })).unclaimed).toBeGreaterThanOrEqual(1);
    const detail = await as(ann).humanTasks.get({ namespace, id: item.id });
    expect(detail).toMatchObject({ formData: { requester: "ann" }, uiSchema: form.uiSchema, outcomes: ["approve", "reject"], can: { claim: true, submit: true, release: false }, response: null });
    expect(await as(ann).humanTasks.claim({ namespace, id: item.id })).toMatchObject({ status: "CLAIMED", claimedBy: { userId: ann.id } });
    expect((await trpcError(as(bob).humanTasks.claim({ namespace, id: item.id }))).code).toBe("CONFLICT");
    expect((await as(bob).humanTasks.get({ namespace, id: item.id })).can).toMatchObject({ submit: false, reason: expect.stringContaining("claimed") as unknown });
    const invalid = await trpcError(as(ann).humanTasks.submit({ namespace, id: item.id, outcome: "approve", data: { amount: 0 } }));
    expect(invalid.code).toBe("BAD_REQUEST");
    expect((invalid.cause as unknown as { fieldErrors: unknown }).fieldErrors).toEqual([{ path: "/amount", message: expect.any(String) as unknown }]);
    expect(await as(ann).humanTasks.submit({ namespace, id: item.id, outcome: "approve", data: { amount: 3 } })).toMatchObject({ status: "COMPLETED", item: { status: "COMPLETED" } });
    expect((await trpcError(as(ann).humanTasks.submit({ namespace, id: item.id, outcome: "approve", data: { amount: 3 } }))).code).toBe("CONFLICT");
    expect((await trpcError(as(ann).humanTasks.get({ namespace, id: randomUUID() }))).code).toBe("NOT_FOUND");
    const closed = await as(ann).humanTasks.inbox({ namespace, view: "all", state: "closed" });
    expect(closed.items.map((i) => i.id)).toContain(item.id);
  });

  it("the self-approval refusal is FORBIDDEN on the inbox and on the operator's completeTask", async () => {
    const starter = await member("operator");
    const { runId, item } = await open([node("HUMAN", "approve", { allowSelfApproval: false })], starter);
    // The run page links the attempt to its inbox item.
    expect((await as(starter).executions.task({ namespace, id: runId, taskId: item.taskId })).humanTaskId).toBe(item.id);
    expect((await trpcError(as(starter).humanTasks.submit({ namespace, id: item.id, outcome: "approve", data: {} }))).code).toBe("FORBIDDEN");
    const operator = await trpcError(as(starter).executions.completeTask({ namespace, id: runId, taskId: item.taskId, output: { outcome: "approve" } }));
    expect(operator.code).toBe("FORBIDDEN");
    expect(operator.message).toMatch(/self-approval/);
    expect((await h.t.db.selectFrom("HumanTasks").select("status").where("id", "=", item.id).executeTakeFirstOrThrow()).status).toBe("PENDING");
  });

  it("reassign takes an operator; a viewer is FORBIDDEN", async () => {
    const viewer = await member();
    const op = await member("operator");
    const { item } = await open([node("HUMAN", "approve")]);
    expect((await trpcError(as(viewer).humanTasks.reassign({ namespace, id: item.id, assignee: "role:admin" }))).code).toBe("FORBIDDEN");
    expect(await as(op).humanTasks.reassign({ namespace, id: item.id, assignee: "role:admin" })).toMatchObject({ assignee: { kind: "role", id: "admin" } });
    expect((await as(viewer).humanTasks.inbox({ namespace, view: "all" })).items.map((i) => i.id)).not.toContain(item.id);
  });

  it("over HTTP, a schema mismatch carries error.data.fieldErrors", async () => {
    const ann = await member();
    const { key } = await keyFor(ann);
    const { item } = await open([node("HUMAN", "approve", { form })]);
    const module = (await import(pathToFileURL(path.join(process.cwd(), "app/api/trpc/[trpc]/route.ts")).href)) as { POST: (request: Request) => Promise<Response> };
    const response = await module.POST(
      new Request("http://localhost:3000/api/trpc/humanTasks.submit", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ namespace, id: item.id, outcome: "approve", data: { amount: "lots" } }),
      }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { code: string; fieldErrors: { path: string; message: string }[] | null } } };
    expect(body.error.data.code).toBe("BAD_REQUEST");
    expect(body.error.data.fieldErrors).toEqual([{ path: "/amount", message: "must be integer" }]);
  });
});

describe("tRPC formTemplates", () => {
  it("saves immutable versions (editor and up) and reads them back", async () => {
    const editor = await member("editor");
    const viewer = await member();
    const name = `expense-${randomUUID().slice(0, 6)}`;
    expect(await as(editor).formTemplates.save({ namespace, name, description: "v1", schema: form.schema, uiSchema: {} })).toEqual({ name, version: 1 });
    expect(await as(editor).formTemplates.save({ namespace, name, schema: { type: "object", properties: {} }, uiSchema: {} })).toEqual({ name, version: 2 });
    expect((await trpcError(as(viewer).formTemplates.save({ namespace, name, schema: form.schema, uiSchema: {} }))).code).toBe("FORBIDDEN");
    expect((await trpcError(as(editor).formTemplates.save({ namespace, name, schema: { type: "string" }, uiSchema: {} }))).code).toBe("BAD_REQUEST");
    expect((await as(viewer).formTemplates.list({ namespace })).find((t) => t.name === name)).toMatchObject({ latestVersion: 2 });
    expect(await as(viewer).formTemplates.get({ namespace, name, version: 1 })).toMatchObject({ version: 1, description: "v1", schema: form.schema, createdBy: `user:${editor.id}` });
    expect((await as(viewer).formTemplates.versions({ namespace, name })).map((v) => v.version)).toEqual([2, 1]);
    expect((await trpcError(as(viewer).formTemplates.get({ namespace, name: "nope" }))).code).toBe("NOT_FOUND");
    // Two saves at once: both land, as consecutive versions.
    const raced = await Promise.all([1, 2, 3].map(() => as(editor).formTemplates.save({ namespace, name, schema: form.schema, uiSchema: {} })));
    expect(raced.map((r) => r.version).sort()).toEqual([3, 4, 5]);
  });
});

describe("REST /human-tasks", () => {
  it("lists, claims and completes with a user's key, with problem details for every refusal", async () => {
    const ann = await member();
    const bob = await member();
    const annKey = (await keyFor(ann)).key;
    const bobKey = (await keyFor(bob)).key;
    const { runId, item } = await open([node("HUMAN", "approve", { form, input: { requester: "${workflow.input.who}" }, assignee: `user:${ann.email}` })]);
    const base = `/ns/${namespace}/human-tasks`;
    const listed = await rest.api<{ items: { id: string }[] }>("GET", `${base}?view=mine`, { key: annKey });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((i) => i.id)).toContain(item.id);
    expect((await rest.api("GET", `${base}/${item.id}`, { key: annKey })).body).toMatchObject({ formData: { requester: "ann" }, can: { submit: true } });
    expect((await rest.api("GET", `${base}/${item.id}`, { key: bobKey })).status).toBe(404);
    expect((await rest.api("POST", `${base}/${item.id}/complete`, { key: bobKey, body: { outcome: "approve", data: { amount: 1 } } })).status).toBe(403);
    expect((await rest.api("POST", `${base}/${item.id}/claim`, { key: annKey })).body).toMatchObject({ status: "CLAIMED" });
    const bad = await rest.api<{ errors: { pointer: string }[] }>("POST", `${base}/${item.id}/complete`, { key: annKey, body: { outcome: "approve", data: { amount: -1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e) => e.pointer)).toEqual(["/body/data/amount"]);
    const done = await rest.api("POST", `${base}/${item.id}/complete`, { key: annKey, body: { outcome: "approve", data: { amount: 2, requester: "mallory" } } });
    expect(done.body).toMatchObject({ status: "COMPLETED", item: { status: "COMPLETED" } });
    expect((await h.tasks(runId))[0]!.output).toMatchObject({ amount: 2, requester: "ann", outcome: "approve" });
    expect((await rest.api("POST", `${base}/${item.id}/complete`, { key: annKey, body: { outcome: "approve", data: { amount: 2 } } })).status).toBe(409);
    expect((await rest.api("POST", `${base}/${item.id}/release`, { key: annKey })).status).toBe(409);
  });

  it("a service account's key acts only on tasks assigned to anyone", async () => {
    const serviceKey = (await keyFor(null)).key;
    const group = await h.t.db.insertInto("Groups").values({ namespaceId: h.namespaceId, name: `g-${randomUUID().slice(0, 6)}`, roles: [] }).returning("name").executeTakeFirstOrThrow();
    const grouped = await open([node("HUMAN", "approve", { assignee: `group:${group.name}` })]);
    const anyone = await open([node("HUMAN", "approve")]);
    const base = `/ns/${namespace}/human-tasks`;
    expect((await rest.api("POST", `${base}/${grouped.item.id}/complete`, { key: serviceKey, body: { outcome: "approve" } })).status).toBe(403);
    expect((await rest.api("POST", `${base}/${anyone.item.id}/complete`, { key: serviceKey, body: { outcome: "approve" } })).body).toMatchObject({ status: "COMPLETED" });
  });

  it("self-approval is refused on REST's complete and on the run signal (403)", async () => {
    const starter = await member("operator");
    const key = (await keyFor(starter)).key;
    const { runId, item } = await open([node("HUMAN", "approve", { allowSelfApproval: false })], starter);
    expect((await rest.api("POST", `/ns/${namespace}/human-tasks/${item.id}/complete`, { key, body: { outcome: "approve" } })).status).toBe(403);
    const signal = await rest.api<{ detail: string }>("POST", `/ns/${namespace}/runs/${runId}/tasks/approve/complete`, { key, body: { output: { outcome: "approve" } } });
    expect(signal.status).toBe(403);
    expect(signal.body.detail).toMatch(/self-approval/);
  });

  it("is in the OpenAPI document", async () => {
    const doc = await rest.api<{ paths: Record<string, unknown> }>("GET", "/openapi.json");
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(["/ns/{ns}/human-tasks", "/ns/{ns}/human-tasks/{id}/complete", "/ns/{ns}/human-tasks/{id}/reassign"]));
  });
});

describe("Conductor's task update", () => {
  it("goes through the same rules: self-approval is a 403, someone else completes it", async () => {
    const starter = await member("operator");
    const other = await member();
    const { runId, item } = await open([node("HUMAN", "approve", { allowSelfApproval: false })], starter);
    const deps = { db: h.t.db, blobs: h.blobs, notifier: () => null, secret: "s".repeat(64) };
    const result = { workflowInstanceId: runId, taskId: item.taskId, status: "COMPLETED" as const, outputData: { outcome: "approve" } };
    const starterKey = await keyFor(starter);
    const refused = await updateConductorTask(deps, h.namespaceId, result, { type: "apiKey", id: starterKey.id }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConductorError);
    expect((refused as ConductorError).status).toBe(403);
    expect(await updateConductorTask(deps, h.namespaceId, result, { type: "user", id: other.id })).toMatchObject({ effect: "ended" });
  });
});

describe("the inbox stream", () => {
  it("sends { id, status } for each change of the namespace's tasks", async () => {
    const notifier = new Notifier({ connectionString: h.t.url, applicationName: "inbox-stream-test", channels: [INBOX_CHANNEL] });
    await notifier.start();
    const stop = new AbortController();
    const stream = inboxStream(notifier, h.namespaceId, stop.signal, { heartbeatMs: 60_000 });
    try {
      expect((await stream.next()).value).toBe("retry: 1000\n\n");
      const next = stream.next();
      const { item } = await open([node("HUMAN", "approve")]);
      const chunk = String((await next).value);
      expect(chunk).toContain("event: inbox");
      expect(chunk).toContain(JSON.stringify({ id: item.id, status: "PENDING" }));
    } finally {
      stop.abort();
      await stream.return(undefined);
      await notifier.close();
    }
  });

  it("GET /api/inbox/stream authenticates, needs ?namespace=, and hides a namespace the caller has no access to", async () => {
    const context = { db: h.t.db, notifier: () => null, logger: { error: () => undefined } } as unknown as Parameters<typeof serveInboxStream>[0];
    const url = (ns?: string) => `http://localhost:3000/api/inbox/stream${ns === undefined ? "" : `?namespace=${encodeURIComponent(ns)}`}`;
    expect((await serveInboxStream(context, new Request(url(namespace)))).status).toBe(401);
    const ann = await member();
    const { key } = await keyFor(ann);
    const auth = { authorization: `Bearer ${key}` };
    expect((await serveInboxStream(context, new Request(url(), { headers: auth }))).status).toBe(400);
    const other = (await h.t.db.selectFrom("Namespaces").select("name").where("id", "=", h.otherNamespaceId).executeTakeFirstOrThrow()).name;
    expect((await serveInboxStream(context, new Request(url(other), { headers: auth }))).status).toBe(404);
    const stop = new AbortController();
    const ok = await serveInboxStream(context, new Request(url(namespace), { headers: auth, signal: stop.signal }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/text\/event-stream/);
    stop.abort();
    await ok.body?.cancel();
  });
});
