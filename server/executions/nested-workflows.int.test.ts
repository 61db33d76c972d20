import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { chain, edge, node, simple, workflow } from "../../engine/definition/test-fixtures";
import type { Json } from "../../engine/definition/test-fixtures";
import { FilesystemBlobStore } from "../lib/blob-store";
import { evaluateBatch } from "../evaluator/evaluator";
import type { EvaluatorDeps } from "../evaluator/evaluator";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { startExecution } from "./start-execution";
import { driveWorkflows } from "../testing/drive-workflows";
import type { DrivenResult } from "../testing/drive-workflows";

/**
 * SUB_WORKFLOW, START_WORKFLOW, failureWorkflow and HUMAN through the real
 * evaluator: the starts happen in the evaluation's transaction, a child's end
 * resumes its parent, and a parent that ends cancels its child.
 */

const t = useTestDatabase();
let scripts: QuickJsScriptEvaluator;
let namespaceId: string;
let blobRoot: string;
let blobs: FilesystemBlobStore;

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-nested-"));
  blobs = new FilesystemBlobStore({ root: blobRoot });
  const ns = await t.db.insertInto("Namespaces").values({ name: `ns-${randomUUID().slice(0, 8)}` }).returning("id").executeTakeFirstOrThrow();
  namespaceId = ns.id;
});
afterAll(async () => {
  await scripts?.close();
  await rm(blobRoot, { recursive: true, force: true });
});

const deps = (): EvaluatorDeps => ({ db: t.db, scripts, blobs });

async function register(definition: Json): Promise<string> {
  const name = `wf_${randomUUID().slice(0, 8)}`;
  const result = await registerWorkflowDefinition(t.db, { namespaceId, definition: { ...definition, name } });
  if (!result.ok) throw new Error(`invalid test definition: ${JSON.stringify(result)}`);
  return name;
}

async function start(name: string, input: Json = {}): Promise<string> {
  const started = await startExecution({ db: t.db, blobs }, { namespaceId, name, input });
  if (!started.ok) throw new Error(JSON.stringify(started));
  return started.workflowId;
}

type Handler = (ref: string, input: Record<string, unknown>) => DrivenResult;

/** Evaluates and works the "task" queue until nothing moves. */
async function drive(handler: Handler = () => ({ status: "COMPLETED" })): Promise<void> {
  const { settled } = await driveWorkflows({ db: t.db, evaluator: deps(), namespaceId, handler: (task) => handler(task.refName, task.input as Record<string, unknown>) });
  if (!settled) throw new Error("the workflows did not settle in 60 rounds");
}

const readBlob = async (ref: string): Promise<unknown> => JSON.parse((await blobs.get(ref)).bytes.toString("utf8")) as unknown;
const execution = (id: string) => t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const children = (id: string) => t.db.selectFrom("WorkflowExecutions").selectAll().where("parentWorkflowId", "=", id).execute();
const task = (workflowId: string, ref: string) =>
  t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", workflowId).where("refName", "=", ref).orderBy("attempt", "desc").executeTakeFirstOrThrow();

describe("SUB_WORKFLOW", () => {
  it("runs the child, waits for it, and hands its output to the parent", async () => {
    const child = await register(
      workflow([simple("work", { input: { n: "${workflow.input.n}" } })], [], { outputParameters: { doubled: "${work.output.doubled}" } }),
    );
    const parent = await register(
      workflow(
        [node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child }, input: { n: "${workflow.input.n}" } }), simple("after", { input: { got: "${sub.output.doubled}" } })],
        chain("sub", "after"),
        { outputParameters: { result: "${after.input.got}" } },
      ),
    );
    const id = await start(parent, { n: 21 });
    const seen: Record<string, unknown>[] = [];
    await drive((ref, input) => {
      seen.push({ ref, ...input });
      return ref === "work" ? { status: "COMPLETED", output: { doubled: Number(input.n) * 2 } } : { status: "COMPLETED" };
    });
    const [kid] = await children(id);
    expect(kid).toMatchObject({ status: "COMPLETED", defName: child, output: { doubled: 42 } });
    expect(kid!.parentTaskId).toBe((await task(id, "sub")).id);
    expect(await task(id, "sub")).toMatchObject({ status: "COMPLETED", subWorkflowId: kid!.id, output: { doubled: 42 } });
    expect(seen).toEqual([
      { ref: "work", n: 21 },
      { ref: "after", got: 42 },
    ]);
    expect(await execution(id)).toMatchObject({ status: "COMPLETED", output: { result: 42 } });
  });

  it("a child that fails fails the parent's task, which retries with a new child", async () => {
    const child = await register(workflow([simple("work", { policy: { retryCount: 0 } })]));
    const parent = await register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child }, policy: { retryCount: 1, retryDelaySeconds: 0 } })]));
    const id = await start(parent);
    let calls = 0;
    await drive(() => (++calls === 1 ? { status: "FAILED", reason: "boom" } : { status: "COMPLETED", output: { ok: true } }));
    const kids = await children(id);
    expect(kids.map((k) => k.status).sort()).toEqual(["COMPLETED", "FAILED"]);
    const attempts = await t.db.selectFrom("TaskExecutions").select(["attempt", "status", "reasonForIncompletion"]).where("workflowId", "=", id).orderBy("attempt").execute();
    expect(attempts[0]).toMatchObject({ attempt: 0, status: "FAILED" });
    expect(attempts[0]!.reasonForIncompletion).toMatch(/^Sub-workflow .* FAILED/);
    expect(attempts[1]).toMatchObject({ attempt: 1, status: "COMPLETED" });
    expect(await execution(id)).toMatchObject({ status: "COMPLETED" });
  });

  it("a parent that fails terminates its running child", async () => {
    const child = await register(workflow([node("WAIT", "hold", { duration: "1h" })]));
    const parent = await register(
      workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: child } }), simple("bad", { policy: { retryCount: 0 } })]),
    );
    const id = await start(parent);
    await drive(() => ({ status: "FAILED", reason: "bad failed" }));
    expect(await execution(id)).toMatchObject({ status: "FAILED" });
    const [kid] = await children(id);
    expect(kid!.status).toBe("TERMINATED");
    expect(await task(id, "sub")).toMatchObject({ status: "CANCELED" });
    expect(await task(kid!.id, "hold")).toMatchObject({ status: "CANCELED" });
  });

  it("an unknown child workflow fails the task with a reason naming it", async () => {
    const parent = await register(workflow([node("SUB_WORKFLOW", "sub", { subWorkflowParam: { name: "no_such_workflow" }, policy: { retryCount: 0 } })]));
    const id = await start(parent);
    await drive();
    expect(await task(id, "sub")).toMatchObject({ status: "FAILED", reasonForIncompletion: 'Could not start workflow "no_such_workflow": Workflow definition "no_such_workflow" not found' });
    expect(await execution(id)).toMatchObject({ status: "FAILED" });
    expect(await children(id)).toEqual([]);
  });
});

describe("START_WORKFLOW", () => {
  it("starts the workflow, completes with its id at once, and does not wait for it", async () => {
    const target = await register(workflow([simple("slow")]));
    const parent = await register(
      workflow([node("START_WORKFLOW", "kick", { startWorkflow: { name: target, input: { from: "${workflow.input.who}" } } })], [], {
        outputParameters: { started: "${kick.output.workflowId}" },
      }),
    );
    const id = await start(parent, { who: "parent" });
    for (let i = 0; i < 5; i++) await evaluateBatch(deps(), { limit: 20 });
    const wf = await execution(id);
    expect(wf.status).toBe("COMPLETED");
    const startedId = (wf.output as { started: string }).started;
    const other = await execution(startedId);
    // Not a child: nothing links it back, and it is still running.
    expect(other).toMatchObject({ defName: target, status: "RUNNING", parentWorkflowId: null, input: { from: "parent" } });
  });

  it("starts the target at its priority once per idempotency key, and FAIL refuses a key already taken", async () => {
    const target = await register(workflow([simple("slow")]));
    const key = `order-${randomUUID().slice(0, 8)}`;
    const parent = await register(
      workflow([node("START_WORKFLOW", "kick", { startWorkflow: { name: target, priority: 9, idempotencyKey: "${workflow.input.key}", idempotencyStrategy: "${workflow.input.strategy}" }, policy: { retryCount: 0 } })], [], {
        outputParameters: { started: "${kick.output.workflowId}" },
      }),
    );
    const first = await start(parent, { key, strategy: "RETURN_EXISTING" });
    const second = await start(parent, { key, strategy: "RETURN_EXISTING" });
    const refused = await start(parent, { key, strategy: "FAIL" });
    for (let i = 0; i < 6; i++) await evaluateBatch(deps(), { limit: 20 });
    const targets = await t.db.selectFrom("WorkflowExecutions").select(["id", "priority"]).where("defName", "=", target).execute();
    expect(targets.map((r) => r.priority)).toEqual([9]);
    for (const id of [first, second]) expect(await execution(id)).toMatchObject({ status: "COMPLETED", output: { started: targets[0]!.id } });
    expect(await task(refused, "kick")).toMatchObject({ status: "FAILED", reasonForIncompletion: `Could not start workflow "${target}": Idempotency key "${key}" was already used by ${targets[0]!.id}` });
  });

  it("a target that does not exist fails the task, and so the workflow", async () => {
    const parent = await register(workflow([node("START_WORKFLOW", "kick", { startWorkflow: { name: "missing_target" }, policy: { retryCount: 0 } })]));
    const id = await start(parent);
    await drive();
    expect(await task(id, "kick")).toMatchObject({ status: "FAILED", reasonForIncompletion: 'Could not start workflow "missing_target": Workflow definition "missing_target" not found' });
    expect(await execution(id)).toMatchObject({ status: "FAILED" });
  });
});

describe("failureWorkflow", () => {
  it("is started with the failed workflow's details", async () => {
    const handler = await register(workflow([simple("notify")]));
    const failing = await register(workflow([simple("a", { policy: { retryCount: 0 } })], [], { failureWorkflow: handler }));
    const id = await start(failing);
    await drive((ref) => (ref === "a" ? { status: "FAILED", reason: "a broke" } : { status: "COMPLETED" }));
    expect(await execution(id)).toMatchObject({ status: "FAILED" });
    const started = await t.db.selectFrom("WorkflowExecutions").selectAll().where("defName", "=", handler).execute();
    expect(started).toHaveLength(1);
    expect(started[0]!.input).toMatchObject({ workflowId: id, failedWorkflow: { workflowId: id, status: "FAILED" } });
    const events = await t.db.selectFrom("WorkflowEvents").select(["type", "data"]).where("workflowId", "=", id).where("type", "=", "FAILURE_WORKFLOW_STARTED").execute();
    expect(events).toEqual([{ type: "FAILURE_WORKFLOW_STARTED", data: { name: handler, workflowId: started[0]!.id } }]);
  });
});

describe("HUMAN", () => {
  it("opens one inbox item when the task starts, with its due time", async () => {
    const def = await register(workflow([node("HUMAN", "approve", { dueIn: "2h", outcomes: ["approve", "reject"] })]));
    const id = await start(def);
    const before = Date.now();
    await evaluateBatch(deps(), { limit: 20 });
    await evaluateBatch(deps(), { limit: 20 });
    const items = await t.db.selectFrom("HumanTasks").selectAll().where("workflowId", "=", id).execute();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ refName: "approve", status: "PENDING", taskId: (await task(id, "approve")).id });
    expect(items[0]!.dueAt!.getTime()).toBeGreaterThanOrEqual(before + 2 * 3600_000 - 1000);
    expect((await execution(id)).status).toBe("RUNNING");
  });
});

describe("large payloads written by the decider", () => {
  it("a workflow output over 256 KB goes to the blob store", async () => {
    const def = await register(workflow([simple("a")], [], { outputParameters: { copy: "${a.output.big}" } }));
    const id = await start(def);
    const big = "x".repeat(300 * 1024);
    await drive(() => ({ status: "COMPLETED", output: { big } }));
    const wf = await execution(id);
    expect(wf.status).toBe("COMPLETED");
    expect(wf.output).toEqual({});
    expect(wf.outputRef).toMatch(/^fs:/);
    expect(await readBlob(wf.outputRef!)).toEqual({ copy: big });
  });

  it("a task input over 256 KB goes to the blob store, and the workflow still reads it", async () => {
    const def = await register(
      workflow([simple("a"), simple("b", { input: { data: "${a.output.big}" } }), simple("c", { input: { len: "${b.input.data}" } })], [edge("a", "b"), edge("b", "c")]),
    );
    const id = await start(def);
    const big = "y".repeat(300 * 1024);
    const inputs: Record<string, Record<string, unknown>> = {};
    await drive((ref, input) => {
      inputs[ref] = input;
      return ref === "a" ? { status: "COMPLETED", output: { big } } : { status: "COMPLETED" };
    });
    const b = await task(id, "b");
    expect(b.inputRef).toMatch(/^fs:/);
    expect(await readBlob(b.inputRef!)).toEqual({ data: big });
    // c's expression read b's offloaded input: resolved before decide saw it (invariant 8).
    const c = await task(id, "c");
    expect(c.inputRef).toMatch(/^fs:/);
    expect(await readBlob(c.inputRef!)).toEqual({ len: big });
    expect((await execution(id)).status).toBe("COMPLETED");
  });
});
