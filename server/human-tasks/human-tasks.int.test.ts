import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { json } from "../../db/json";
import type { HumanTaskRow, MemberRole } from "../../db/schema";
import { chain, edge, node, simple, workflow } from "../../engine/definition/test-fixtures";
import { createApiKey } from "../auth/api-keys";
import { startExecution } from "../executions/start-execution";
import { fireDueTimerBatch } from "../sidecar/timer-poller";
import { summary, useActionHarness } from "../executions/actions/action-test-harness";
import { completeExternalTask } from "../executions/actions/complete-external-task";
import { terminateWorkflow } from "../executions/actions/terminate-workflow";
import type { Actor } from "../executions/actions/action-support";
import { claimHumanTask } from "./claim-human-task";
import { countHumanTasks } from "./count-human-tasks";
import { getHumanTask } from "./get-human-task";
import { listHumanTasks } from "./list-human-tasks";
import { reassignHumanTask } from "./reassign-human-task";
import { releaseHumanTask } from "./release-human-task";
import { submitHumanTask } from "./submit-human-task";

/**
 * The human-task service on the real database and the real decider: who sees
 * and may act on a task, claims, reassignment, N approvals, self-approval,
 * form validation, races, deadlines and escalation, and the edge cases
 * (untaken branches, loops, terminate, sub-workflows).
 */

const h = useActionHarness();

interface Person {
  id: string;
  email: string;
  actor: Actor;
}

async function person(role: MemberRole | null = "viewer"): Promise<Person> {
  const email = `p-${randomUUID().slice(0, 8)}@example.com`;
  const user = await h.t.db.insertInto("Users").values({ email }).returning("id").executeTakeFirstOrThrow();
  if (role !== null) await h.t.db.insertInto("NamespaceMembers").values({ namespaceId: h.namespaceId, userId: user.id, role }).execute();
  return { id: user.id, email, actor: { type: "user", id: user.id } };
}

async function group(members: Person[], roles: MemberRole[] = []): Promise<string> {
  const name = `g-${randomUUID().slice(0, 8)}`;
  const row = await h.t.db.insertInto("Groups").values({ namespaceId: h.namespaceId, name, roles }).returning("id").executeTakeFirstOrThrow();
  if (members.length > 0) await h.t.db.insertInto("GroupMembers").values(members.map((m) => ({ groupId: row.id, userId: m.id }))).execute();
  return name;
}

/** Registers `nodes`, starts a run (as `starter`), evaluates once, returns the run and its open inbox rows. */
async function open(definition: Record<string, unknown>, options: { input?: Record<string, unknown>; starter?: Person } = {}): Promise<{ id: string; items: HumanTaskRow[] }> {
  const name = await h.register(definition);
  const started = await startExecution({ db: h.t.db, blobs: h.blobs }, { namespaceId: h.namespaceId, name, input: options.input ?? {}, createdBy: options.starter === undefined ? null : `user:${options.starter.id}` });
  if (!started.ok) throw new Error(JSON.stringify(started));
  await h.evaluate();
  return { id: started.workflowId, items: await items(started.workflowId) };
}

const items = (workflowId: string) => h.t.db.selectFrom("HumanTasks").selectAll().where("workflowId", "=", workflowId).orderBy("createdAt").orderBy("id").execute();
const item = async (id: string) => h.t.db.selectFrom("HumanTasks").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

const submit = (who: Person | Actor, id: string, outcome: string | undefined, data: Record<string, unknown> = {}) =>
  submitHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: "actor" in who ? who.actor : who, data, ...(outcome === undefined ? {} : { outcome }) });
const claim = (who: Person, id: string) => claimHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: who.actor });
const list = (who: Person, view: "mine" | "groups" | "unclaimed" | "all", state: "open" | "closed" = "open") =>
  listHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: who.actor, view, state }).then((r) => (r.ok ? r.items.map((i) => i.id) : r));

const expenseForm = {
  schema: {
    type: "object",
    required: ["amount", "email"],
    properties: {
      amount: { type: "number", minimum: 1, maximum: 1000 },
      email: { type: "string", format: "email" },
      note: { type: "string", maxLength: 20 },
      requester: { type: "string" },
    },
  },
  uiSchema: { requester: { "ui:readonly": true } },
};

describe("opening a task", () => {
  it("resolves the assignee, title, approvals, starter and due time into the inbox row", async () => {
    const boss = await person("viewer");
    const starter = await person("operator");
    const { items: rows } = await open(
      workflow([
        node("HUMAN", "approve", {
          title: "Expense ${workflow.input.id}",
          assignee: "user:${workflow.input.boss}",
          approvals: 2,
          allowSelfApproval: false,
          dueIn: "2h",
          form: expenseForm,
          input: { amount: "${workflow.input.amount}", requester: "${workflow.input.who}" },
        }),
      ]),
      { input: { id: 7, boss: boss.email.toUpperCase(), amount: 12, who: "ann" }, starter },
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      title: "Expense 7",
      assigneeKind: "user",
      assigneeUserId: boss.id,
      approvalsRequired: 2,
      allowSelfApproval: false,
      starterUserId: starter.id,
      outcomes: ["approve", "reject"],
      status: "PENDING",
    });
    expect(rows[0]!.dueAt!.getTime()).toBeGreaterThan(Date.now() + 2 * 3600_000 - 60_000);
    const detail = await getHumanTask(h.deps(), { namespaceId: h.namespaceId, id: rows[0]!.id, actor: boss.actor });
    expect(detail).toMatchObject({ ok: true, formData: { amount: 12, requester: "ann" }, outcomes: ["approve", "reject"], can: { claim: true, submit: true, reassign: false } });
  });

  it("opens on the latest form template version, and keeps that version after a new one is saved", async () => {
    const name = `form-${randomUUID().slice(0, 8)}`;
    for (const version of [1, 2]) {
      await h.t.db
        .insertInto("FormTemplates")
        .values({ namespaceId: h.namespaceId, name, version, schema: json({ type: "object", properties: { [`v${version}`]: { type: "string" } } }), uiSchema: json({}) })
        .execute();
    }
    const viewer = await person();
    const { items: rows } = await open(workflow([node("HUMAN", "h", { form: { template: { name } } })]));
    await h.t.db.insertInto("FormTemplates").values({ namespaceId: h.namespaceId, name, version: 3, schema: json({ type: "object", properties: { v3: { type: "string" } } }) }).execute();
    const detail = await getHumanTask(h.deps(), { namespaceId: h.namespaceId, id: rows[0]!.id, actor: viewer.actor });
    expect(detail.ok && Object.keys(detail.schema.properties as object)).toEqual(["v2"]);
    const pinned = await open(workflow([node("HUMAN", "h", { form: { template: { name, version: 1 } } })]));
    const pinnedDetail = await getHumanTask(h.deps(), { namespaceId: h.namespaceId, id: pinned.items[0]!.id, actor: viewer.actor });
    expect(pinnedDetail.ok && Object.keys(pinnedDetail.schema.properties as object)).toEqual(["v1"]);
  });
});

describe("who sees and acts", () => {
  it("a group task is visible to its members only; others are refused and get NOT_FOUND", async () => {
    const member = await person();
    const outsider = await person();
    const name = await group([member]);
    const { items: rows } = await open(workflow([node("HUMAN", "h", { assignee: `group:${name}` })]));
    const id = rows[0]!.id;
    expect(await list(member, "groups")).toContain(id);
    expect(await list(member, "unclaimed")).toContain(id);
    for (const view of ["mine", "groups", "unclaimed", "all"] as const) expect(await list(outsider, view)).not.toContain(id);
    expect(await getHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: outsider.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect(await claim(outsider, id)).toMatchObject({ ok: false, code: "forbidden" });
    expect(await submit(outsider, id, "approve")).toMatchObject({ ok: false, code: "forbidden", message: expect.stringContaining("group") as unknown });
    expect(await countHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: member.actor })).toMatchObject({ ok: true, groups: expect.any(Number) as unknown });
    expect(await submit(member, id, "approve")).toMatchObject({ ok: true, status: "COMPLETED" });
  });

  it("a role task is for that role and up", async () => {
    const viewer = await person("viewer");
    const editor = await person("editor");
    const { items: rows } = await open(workflow([node("HUMAN", "h", { assignee: "role:operator" })]));
    const id = rows[0]!.id;
    expect(await list(viewer, "all")).not.toContain(id);
    expect(await list(editor, "groups")).toContain(id);
    expect(await submit(viewer, id, "approve")).toMatchObject({ ok: false, code: "forbidden" });
    expect(await submit(editor, id, "approve")).toMatchObject({ ok: true });
  });

  it("a user task is not yours: 403; another namespace's id: not found", async () => {
    const ann = await person();
    const bob = await person();
    const { items: rows } = await open(workflow([node("HUMAN", "h", { assignee: `user:${ann.email}` })]));
    const id = rows[0]!.id;
    expect(await submit(bob, id, "approve")).toMatchObject({ ok: false, code: "forbidden", message: expect.stringContaining("not to you") as unknown });
    expect(await list(ann, "mine")).toContain(id);
    expect(await submitHumanTask(h.deps(), { namespaceId: h.otherNamespaceId, id, actor: ann.actor, data: {}, outcome: "approve" })).toMatchObject({ ok: false, code: "not-found" });
    expect(await claimHumanTask(h.deps(), { namespaceId: h.otherNamespaceId, id, actor: ann.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect(await getHumanTask(h.deps(), { namespaceId: h.otherNamespaceId, id, actor: ann.actor })).toMatchObject({ ok: false, code: "not-found" });
    expect((await item(id)).status).toBe("PENDING");
  });

  it("claim and release: someone else's claim is a conflict; an operator may release it", async () => {
    const ann = await person();
    const bob = await person();
    const op = await person("operator");
    const { id: runId, items: rows } = await open(workflow([node("HUMAN", "h")]));
    const id = rows[0]!.id;
    expect(await claim(ann, id)).toMatchObject({ ok: true, item: { status: "CLAIMED", claimedBy: { userId: ann.id, email: ann.email } } });
    expect(await claim(ann, id)).toMatchObject({ ok: true });
    expect(await claim(bob, id)).toMatchObject({ ok: false, code: "conflict" });
    expect(await submit(bob, id, "approve")).toMatchObject({ ok: false, code: "conflict", message: expect.stringContaining(ann.email) as unknown });
    expect(await releaseHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: bob.actor })).toMatchObject({ ok: false, code: "conflict" });
    expect(await releaseHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: op.actor })).toMatchObject({ ok: true, item: { status: "PENDING", claimedBy: null } });
    expect(await claim(bob, id)).toMatchObject({ ok: true });
    const audit = (await h.audit(runId)).map((a) => a.action);
    expect(audit).toEqual(["human-task.claim", "human-task.release", "human-task.claim"]);
    const history = (await h.events(runId)).map((e) => e.type).filter((t) => t.startsWith("HUMAN_TASK"));
    expect(history).toEqual(["HUMAN_TASK_CLAIMED", "HUMAN_TASK_RELEASED", "HUMAN_TASK_CLAIMED"]);
  });

  it("reassignment takes an operator; the new assignee gets it, unclaimed, and it is audited", async () => {
    const ann = await person();
    const bob = await person();
    const op = await person("operator");
    const { id: runId, items: rows } = await open(workflow([node("HUMAN", "h", { assignee: `user:${ann.email}` })]));
    const id = rows[0]!.id;
    await claim(ann, id);
    expect(await reassignHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: ann.actor, assignee: `user:${bob.email}` })).toMatchObject({ ok: false, code: "forbidden" });
    expect(await reassignHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: op.actor, assignee: "user:nobody@example.com" })).toMatchObject({ ok: false, code: "invalid-input" });
    expect(await reassignHumanTask(h.deps(), { namespaceId: h.namespaceId, id, actor: op.actor, assignee: `user:${bob.email}` })).toMatchObject({
      ok: true,
      item: { status: "PENDING", claimedBy: null, assignee: { kind: "user", id: bob.id, label: bob.email } },
    });
    expect(await submit(ann, id, "approve")).toMatchObject({ ok: false, code: "forbidden" });
    expect(await submit(bob, id, "approve")).toMatchObject({ ok: true });
    const reassigned = (await h.audit(runId)).find((a) => a.action === "human-task.reassign");
    expect(reassigned).toMatchObject({ actorId: op.id, details: { from: `user:${ann.email}`, to: `user:${bob.email}` } });
  });
});

describe("the inbox list", () => {
  it("open tasks come by due date (none last), then age, keyset-paged; closed ones newest first", async () => {
    const op = await person("operator");
    const due2h = await open(workflow([node("HUMAN", "h", { dueIn: "2h" })]));
    const none = await open(workflow([node("HUMAN", "h")]));
    const due1h = await open(workflow([node("HUMAN", "h", { dueIn: "1h" })]));
    const mine = new Set([due2h.items[0]!.id, none.items[0]!.id, due1h.items[0]!.id]);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await listHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: op.actor, view: "all", limit: 1, ...(cursor === undefined ? {} : { cursor }) });
      if (!result.ok) throw new Error(result.message);
      seen.push(...result.items.map((i) => i.id));
      if (result.nextCursor === null) break;
      cursor = result.nextCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => mine.has(id))).toEqual([due1h.items[0]!.id, due2h.items[0]!.id, none.items[0]!.id]);
    const closedFirst = await person();
    await submit(closedFirst, none.items[0]!.id, "approve");
    await submit(closedFirst, due1h.items[0]!.id, "approve");
    const closed = await listHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: closedFirst.actor, view: "all", state: "closed" });
    expect(closed.ok && closed.items.map((i) => i.id).slice(0, 2)).toEqual([due1h.items[0]!.id, none.items[0]!.id]);
    expect(await listHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: op.actor, view: "all", cursor: "nope" })).toMatchObject({ ok: false, code: "invalid-input" });
  });
});

describe("submitting", () => {
  it("a schema mismatch is refused with field errors and changes nothing; a valid one completes with the contract's output", async () => {
    const ann = await person();
    const { id: runId, items: rows } = await open(
      workflow(
        [
          node("HUMAN", "approve", { form: expenseForm, input: { requester: "${workflow.input.who}" } }),
          node("SWITCH", "route", { cases: ["approve", "reject"], input: { switchCaseValue: "${approve.output.outcome}" } }),
          simple("paid"),
          simple("refused"),
        ],
        [edge("approve", "route"), edge("route", "paid", "approve"), edge("route", "refused", "reject")],
      ),
      { input: { who: "ann" } },
    );
    const id = rows[0]!.id;
    const bad = await submit(ann, id, "approve", { amount: 5000, email: "not-an-email", note: "x".repeat(30) });
    expect(bad).toMatchObject({ ok: false, code: "invalid-data" });
    expect(!bad.ok && "fieldErrors" in bad && bad.fieldErrors?.map((e) => e.path).sort()).toEqual(["/amount", "/email", "/note"]);
    const missing = await submit(ann, id, "approve", {});
    expect(!missing.ok && missing.fieldErrors?.map((e) => e.path).sort()).toEqual(["/amount", "/email"]);
    expect(await submit(ann, id, "maybe", { amount: 5, email: "a@b.co" })).toMatchObject({ ok: false, code: "invalid-data", message: expect.stringContaining("not one of") as unknown });
    expect(await submit(ann, id, undefined, { amount: 5, email: "a@b.co" })).toMatchObject({ ok: false, code: "invalid-data" });
    expect(await item(id)).toMatchObject({ status: "PENDING", response: null });
    expect(await h.t.db.selectFrom("HumanTaskSubmissions").select("id").where("humanTaskId", "=", id).execute()).toEqual([]);

    // The read-only field keeps its pre-filled value whatever was sent.
    expect(await submit(ann, id, "approve", { amount: 5, email: "a@b.co", requester: "mallory" })).toMatchObject({ ok: true, status: "COMPLETED", item: { status: "COMPLETED" } });
    const task = (await h.tasks(runId)).find((t) => t.refName === "approve")!;
    expect(task).toMatchObject({ status: "COMPLETED", output: { amount: 5, email: "a@b.co", requester: "ann", outcome: "approve", completedBy: { userId: ann.id, email: ann.email } } });
    expect(await item(id)).toMatchObject({ status: "COMPLETED", outcome: "approve", completedByUserId: ann.id });
    expect((await h.audit(runId)).find((a) => a.action === "human-task.complete")).toMatchObject({
      actorType: "user",
      actorId: ann.id,
      details: { humanTaskId: id, outcome: "approve", completedBy: { userId: ann.id, email: ann.email }, taskType: "HUMAN", status: "COMPLETED" },
    });
    expect((await h.events(runId)).find((e) => e.type === "TASK_COMPLETED" && e.refName === "approve")?.data).toMatchObject({ outcome: "approve", actor: { type: "user", id: ann.id } });
    await h.drive();
    expect(summary(await h.tasks(runId)).map(([ref, , status]) => [ref, status])).toEqual([
      ["approve", "COMPLETED"],
      ["paid", "COMPLETED"],
      ["refused", "SKIPPED"],
      ["route", "COMPLETED"],
    ]);
    // Closed: 409.
    expect(await submit(ann, id, "approve", { amount: 5, email: "a@b.co" })).toMatchObject({ ok: false, code: "conflict" });
    expect(await claim(ann, id)).toMatchObject({ ok: false, code: "conflict" });
  });

  it("two people completing at once: exactly one wins, the other is told (conflict)", async () => {
    const ann = await person();
    const bob = await person();
    const { items: rows } = await open(workflow([node("HUMAN", "h")]));
    const id = rows[0]!.id;
    const results = await Promise.all([submit(ann, id, "approve"), submit(bob, id, "reject")]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([expect.objectContaining({ ok: false, code: "conflict" })]);
    expect(await h.t.db.selectFrom("HumanTaskSubmissions").select("userId").where("humanTaskId", "=", id).execute()).toHaveLength(1);
  });

  it("N approvals: distinct people choosing the first outcome; the same person twice is refused; any other outcome completes at once", async () => {
    const [ann, bob, cat] = [await person(), await person(), await person()];
    const twice = await open(workflow([node("HUMAN", "h", { approvals: 2 })]));
    const id = twice.items[0]!.id;
    expect(await submit(ann, id, "approve")).toMatchObject({ ok: true, status: "APPROVAL_RECORDED", item: { status: "PENDING", approvalsRequired: 2, approvalsGiven: 1 } });
    expect(await submit(ann, id, "approve")).toMatchObject({ ok: false, code: "conflict" });
    expect(await claim(ann, id)).toMatchObject({ ok: false, code: "conflict" });
    expect(await submit(bob, id, "approve", { note: "fine" })).toMatchObject({ ok: true, status: "COMPLETED" });
    const task = (await h.tasks(twice.id))[0]!;
    expect(task.output).toMatchObject({ note: "fine", outcome: "approve", completedBy: { userId: bob.id } });
    expect((task.output as { submissions: { userId: string; outcome: string }[] }).submissions.map((s) => [s.userId, s.outcome])).toEqual([
      [ann.id, "approve"],
      [bob.id, "approve"],
    ]);
    expect((await h.events(twice.id)).some((e) => e.type === "HUMAN_TASK_APPROVAL_RECORDED")).toBe(true);

    const rejected = await open(workflow([node("HUMAN", "h", { approvals: 3 })]));
    const rid = rejected.items[0]!.id;
    expect(await submit(ann, rid, "approve")).toMatchObject({ status: "APPROVAL_RECORDED" });
    expect(await submit(cat, rid, "reject")).toMatchObject({ ok: true, status: "COMPLETED" });
    expect((await h.tasks(rejected.id))[0]!.output).toMatchObject({ outcome: "reject", completedBy: { userId: cat.id } });
  });
});

describe("self-approval", () => {
  it("the run's starter is refused on every path when allowSelfApproval is false; someone else is not", async () => {
    const starter = await person("operator");
    const other = await person();
    const { id: runId, items: rows } = await open(workflow([node("HUMAN", "h", { allowSelfApproval: false })]), { starter });
    const id = rows[0]!.id;
    // The inbox / REST service.
    expect(await submit(starter, id, "approve")).toMatchObject({ ok: false, code: "forbidden", message: expect.stringContaining("self-approval") as unknown });
    expect(await claim(starter, id)).toMatchObject({ ok: false, code: "forbidden" });
    // The API signal / operator's completion / Conductor update all end in completeExternalTask.
    expect(await completeExternalTask(h.deps(), { namespaceId: h.namespaceId, workflowId: runId, actor: starter.actor, taskRef: "h", output: { outcome: "approve" } })).toMatchObject({
      ok: false,
      code: "forbidden",
    });
    // An API key acting for the starter is the starter.
    const key = await createApiKey(h.t.db, { namespaceId: h.namespaceId, name: `k-${randomUUID().slice(0, 6)}`, scopes: ["admin"], userId: starter.id, createdBy: "test" });
    expect(await completeExternalTask(h.deps(), { namespaceId: h.namespaceId, workflowId: runId, actor: { type: "apiKey", id: key.id }, taskRef: "h", output: { outcome: "approve" } })).toMatchObject({
      ok: false,
      code: "forbidden",
    });
    expect((await item(id)).status).toBe("PENDING");
    expect(await completeExternalTask(h.deps(), { namespaceId: h.namespaceId, workflowId: runId, actor: other.actor, taskRef: "h", output: { outcome: "approve" } })).toMatchObject({ ok: true, status: "COMPLETED" });
  });

  it("a sub-workflow's task is judged against the root run's starter", async () => {
    const starter = await person("operator");
    const child = await h.register(workflow([node("HUMAN", "inner", { allowSelfApproval: false })]));
    const { id: parentId } = await open(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child } }), simple("after")], chain("sub", "after")), { starter });
    await h.evaluate();
    const childRun = await h.t.db.selectFrom("WorkflowExecutions").select("id").where("parentWorkflowId", "=", parentId).executeTakeFirstOrThrow();
    const [inner] = await items(childRun.id);
    expect(inner).toMatchObject({ starterUserId: starter.id });
    expect(await submit(starter, inner!.id, "approve")).toMatchObject({ ok: false, code: "forbidden" });
  });
});

describe("edge cases", () => {
  it("a HUMAN node on an untaken SWITCH branch never appears in any inbox", async () => {
    const op = await person("admin");
    const { id } = await open(
      workflow(
        [node("SWITCH", "s", { cases: ["needs-approval", "auto"], input: { switchCaseValue: "${workflow.input.path}" } }), node("HUMAN", "approve"), simple("other")],
        [edge("s", "approve", "needs-approval"), edge("s", "other", "auto")],
      ),
      { input: { path: "auto" } },
    );
    await h.drive();
    expect((await h.execution(id)).status).toBe("COMPLETED");
    expect(await items(id)).toEqual([]);
    const all = await listHumanTasks(h.deps(), { namespaceId: h.namespaceId, actor: op.actor, view: "all" });
    expect(all.ok && all.items.filter((i) => i.workflowId === id)).toEqual([]);
  });

  it("a HUMAN node inside a DO_WHILE yields one inbox item per iteration", async () => {
    const ann = await person();
    const { id } = await open(
      workflow([node("DO_WHILE", "loop", { loopCondition: "$.loop['iteration'] < 3" }), node("HUMAN", "review", { parent: "loop" })]),
    );
    for (let round = 1; round <= 3; round++) {
      const open = (await items(id)).filter((r) => r.status === "PENDING");
      expect(open).toHaveLength(1);
      expect(await submit(ann, open[0]!.id, "approve")).toMatchObject({ ok: true });
      await h.drive();
    }
    const all = await items(id);
    expect(all.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
    expect(new Set(all.map((r) => r.taskId)).size).toBe(3);
    expect((await h.execution(id)).status).toBe("COMPLETED");
  });

  it("a TERMINATE task ends the run while a HUMAN task beside it is open: the item is canceled and can no longer be submitted", async () => {
    const { id, items: rows } = await open(
      workflow([node("HUMAN", "review"), simple("a"), node("TERMINATE", "stop", { terminationStatus: "FAILED", terminationReason: "stopped early" })], [edge("a", "stop")]),
    );
    expect(rows.map((r) => r.status)).toEqual(["PENDING"]);
    await h.drive();
    expect(await h.execution(id)).toMatchObject({ status: "FAILED", reasonForIncompletion: "stopped early" });
    expect((await h.execution(id)).endedAt).not.toBeNull();
    expect((await items(id)).map((r) => r.status)).toEqual(["CANCELED"]);
    const ann = await person();
    expect(await submit(ann, rows[0]!.id, "approve")).toMatchObject({ ok: false, code: "conflict" });
  });

  it("terminating the run cancels its open items and their deadlines", async () => {
    const { id, items: rows } = await open(workflow([node("HUMAN", "a", { dueIn: "1h", escalation: [{ action: "timeout" }] }), node("HUMAN", "b")]));
    expect(rows).toHaveLength(2);
    expect(await h.t.db.selectFrom("Timers").select("kind").where("workflowId", "=", id).where("kind", "=", "humanEscalation").execute()).toHaveLength(1);
    expect(await terminateWorkflow(h.deps(), { namespaceId: h.namespaceId, workflowId: id, actor: h.actor, reason: "no longer needed" })).toMatchObject({ ok: true });
    expect((await items(id)).map((r) => r.status)).toEqual(["CANCELED", "CANCELED"]);
    expect(await h.t.db.selectFrom("Timers").select("kind").where("workflowId", "=", id).execute()).toEqual([]);
    const ann = await person();
    expect(await submit(ann, rows[1]!.id, "approve")).toMatchObject({ ok: false, code: "conflict" });
  });

  it("a HUMAN task in a SUB_WORKFLOW resumes the parent when completed", async () => {
    const ann = await person();
    const child = await h.register(workflow([node("HUMAN", "inner")], [], { outputParameters: { decision: "${inner.output.outcome}" } }));
    const { id: parentId } = await open(
      workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child } }), simple("after", { input: { decision: "${sub.output.decision}" } })], chain("sub", "after")),
    );
    await h.evaluate();
    const childRun = await h.t.db.selectFrom("WorkflowExecutions").select("id").where("parentWorkflowId", "=", parentId).executeTakeFirstOrThrow();
    const [inner] = await items(childRun.id);
    expect(await submit(ann, inner!.id, "reject")).toMatchObject({ ok: true, status: "COMPLETED" });
    const handled = await h.drive();
    expect(handled.map((t) => [t.refName, t.input])).toEqual([["after", { decision: "reject" }]]);
    expect((await h.execution(childRun.id)).status).toBe("COMPLETED");
    expect((await h.execution(parentId)).status).toBe("COMPLETED");
  });
});

describe("deadlines and escalation", () => {
  const fire = (at: number) => fireDueTimerBatch(h.t.db, { limit: 500, owner: "test", now: new Date(at) });

  it("reassigns to the next assignee with a new deadline, then times the task out (retry policy applies)", async () => {
    const ann = await person();
    const bob = await person();
    const { id, items: rows } = await open(
      workflow([
        {
          ...node("HUMAN", "h", {
            assignee: `user:${ann.email}`,
            dueIn: "1h",
            escalation: [{ action: "reassign", assignee: `user:${bob.email}`, dueIn: "30m" }, { action: "timeout" }],
          }),
          policy: { retryCount: 0 },
        },
      ]),
    );
    const hid = rows[0]!.id;
    await claim(ann, hid);
    const first = await fire(Date.now() + 3600_000 + 1000);
    expect(first.escalations).toEqual([expect.objectContaining({ action: "reassign", to: `user:${bob.email}` })]);
    expect(await item(hid)).toMatchObject({ assigneeUserId: bob.id, status: "PENDING", claimedByUserId: null, escalationLevel: 1 });
    expect((await item(hid)).dueAt!.getTime()).toBeGreaterThan(Date.now() + 3600_000 + 29 * 60_000);
    const second = await fire(Date.now() + 3600_000 + 31 * 60_000 + 1000);
    expect(second.escalations).toEqual([expect.objectContaining({ action: "timeout" })]);
    expect((await item(hid)).status).toBe("EXPIRED");
    expect((await h.tasks(id))[0]!.status).toBe("TIMED_OUT");
    await h.evaluate();
    expect((await h.execution(id)).status).toBe("TIMED_OUT");
    const escalations = (await h.audit(id)).filter((a) => a.action === "human-task.escalate").map((a) => (a.details as { action: string }).action);
    expect(escalations).toEqual(["reassign", "timeout"]);
    expect((await h.events(id)).filter((e) => e.type === "HUMAN_TASK_ESCALATED")).toHaveLength(2);
  });

  it("completes with the default outcome on nobody's behalf, and a downstream task reads it", async () => {
    const { id, items: rows } = await open(
      workflow(
        [node("HUMAN", "h", { dueIn: "10m", escalation: [{ action: "complete", outcome: "reject", data: { note: "expired" } }] }), simple("after", { input: { o: "${h.output.outcome}", by: "${h.output.completedBy}" } })],
        chain("h", "after"),
      ),
    );
    const result = await fire(Date.now() + 11 * 60_000);
    expect(result.escalations).toEqual([expect.objectContaining({ action: "complete", outcome: "reject" })]);
    expect(await item(rows[0]!.id)).toMatchObject({ status: "COMPLETED", outcome: "reject", completedByUserId: null });
    const handled = await h.drive();
    expect(handled.map((t) => t.input)).toEqual([{ o: "reject", by: null }]);
    expect((await h.execution(id)).status).toBe("COMPLETED");
  });

  it("an escalation timeout is a timeout like any other: with timeoutPolicy RETRY the retry opens a new item with its own deadline", async () => {
    const { id, items: rows } = await open(workflow([{ ...node("HUMAN", "h", { dueIn: "1h", escalation: [{ action: "timeout" }] }), policy: { retryCount: 1, retryDelaySeconds: 0, timeoutPolicy: "RETRY" } }]));
    expect(rows).toHaveLength(1);
    expect((await fire(Date.now() + 3600_000 + 1000)).escalations).toEqual([expect.objectContaining({ action: "timeout" })]);
    await h.evaluate();
    await h.evaluate();
    const after = await items(id);
    expect(after.map((r) => r.status)).toEqual(["EXPIRED", "PENDING"]);
    expect(after[1]!.taskId).not.toBe(after[0]!.taskId);
    expect(summary(await h.tasks(id))).toEqual([
      ["h", 0, "TIMED_OUT"],
      ["h", 1, "IN_PROGRESS"],
    ]);
    expect(await h.t.db.selectFrom("Timers").select("taskId").where("workflowId", "=", id).where("kind", "=", "humanEscalation").execute()).toEqual([{ taskId: after[1]!.taskId }]);
  });

  it("a timer for a task already completed is dropped", async () => {
    const ann = await person();
    const { items: rows } = await open(workflow([node("HUMAN", "h", { dueIn: "5m", escalation: [{ action: "timeout" }] })]));
    await submit(ann, rows[0]!.id, "approve");
    const result = await fire(Date.now() + 6 * 60_000);
    expect((result.escalations ?? []).filter((e) => e.action !== "dropped")).toEqual([]);
  });
});
