import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { validateDefinition } from "../../engine";
import { createApiKey, revokeApiKey } from "../auth/api-keys";
import { evaluateBatch } from "../evaluator/evaluator";
import { createTestKey, createTestNamespace } from "../rest/testing/rest-fixtures";
import type { TestNamespace } from "../rest/testing/rest-fixtures";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { registerWorkflowDefinition } from "../definitions/register-workflow-definition";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import { mintConductorToken } from "./conductor-token";
import { TEST_SECRET, keyPair, startConductorHarness } from "./testing/conductor-harness";
import type { ConductorHarness } from "./testing/conductor-harness";

// Conductor's REST API over real HTTP on real Postgres: auth, metadata,
// starts, reads, operator actions, namespace isolation and bad input. The
// decider runs in-process (evaluateBatch) where a step needs it; the whole
// loop with a real sidecar is conductor-worker.int.test.ts.

const t = useTestDatabase();
let h: ConductorHarness;
let scripts: QuickJsScriptEvaluator;
let ns: TestNamespace;
let other: TestNamespace;
let adminKey: string;
let workerKey: string;
let otherKey: string;
let admin: string;
let worker: string;
let stranger: string;

async function tokenFor(key: string): Promise<string> {
  const answer = await h.call<{ token: string }>("POST", "/token", { body: keyPair(key) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.token;
}

beforeAll(async () => {
  scripts = await createQuickJsScriptEvaluator();
  h = await startConductorHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "cd");
  other = await createTestNamespace(t.db, "cd-other");
  adminKey = await createTestKey(t.db, ns, ["admin"]);
  workerKey = await createTestKey(t.db, ns, ["worker"]);
  otherKey = await createTestKey(t.db, other, ["admin"]);
  [admin, worker, stranger] = await Promise.all([tokenFor(adminKey), tokenFor(workerKey), tokenFor(otherKey)]);
});
afterAll(async () => {
  await h?.close();
  await scripts?.close();
});

async function decide(): Promise<void> {
  for (let i = 0; i < 20 && (await evaluateBatch({ db: t.db, scripts, blobs: h.deps.blobs }, { limit: 50 })) > 0; i++);
}

let counter = 0;
const uniqueName = (label: string) => `${label}_${++counter}`;

/** A two-task Conductor WorkflowDef on worker task types `a` and `b`. */
function twoStep(name: string, a = "cd_a", b = "cd_b", version = 1) {
  return {
    name,
    version,
    schemaVersion: 2,
    tasks: [
      { name: a, taskReferenceName: "first", type: "SIMPLE", inputParameters: { x: "${workflow.input.x}" } },
      { name: b, taskReferenceName: "second", type: "SIMPLE", inputParameters: { y: "${first.output.y}" } },
    ],
    outputParameters: { result: "${second.output.z}" },
  };
}

describe("auth: POST /token and X-Authorization", () => {
  it("exchanges a key's id and secret for a token that works as X-Authorization; keyId may carry its nf_", async () => {
    const pair = keyPair(adminKey);
    const answer = await h.call<{ token: string }>("POST", "/token", { body: { keyId: `nf_${pair.keyId}`, keySecret: pair.keySecret } });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body.token.split(".")).toHaveLength(3);
    expect((await h.call("GET", "/metadata/taskdefs", { token: answer.body.token })).status).toBe(200);
  });

  it("refuses a wrong secret, a garbage, foreign-signed or missing token with 401 INVALID_TOKEN, in JSON", async () => {
    const wrong = await h.call("POST", "/token", { body: { keyId: keyPair(adminKey).keyId, keySecret: "x".repeat(43) } });
    expect(wrong).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    expect(wrong.contentType).toMatch(/^application\/json/);
    const forged = mintConductorToken("another-secret".padEnd(64, "y"), { apiKeyId: "00000000-0000-0000-0000-000000000000", prefix: keyPair(adminKey).keyId }, Date.now());
    for (const token of ["garbage", forged, `${admin}x`]) {
      expect(await h.call("GET", "/metadata/taskdefs", { token })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    }
    expect(await h.call("GET", "/metadata/taskdefs")).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    // An unknown path is not told apart from a known one before authentication.
    expect(await h.call("GET", "/no/such/path")).toMatchObject({ status: 401 });
    expect(await h.call("GET", "/no/such/path", { token: admin })).toMatchObject({ status: 404, body: { status: 404 } });
  });

  it("answers EXPIRED_TOKEN for a token past its lifetime, and INVALID_TOKEN once its key is revoked", async () => {
    const created = await createApiKey(t.db, { namespaceId: ns.id, name: "to-revoke", scopes: ["admin"], createdBy: "test" });
    const { keyId } = keyPair(created.key);
    const old = mintConductorToken(TEST_SECRET, { apiKeyId: created.id, prefix: keyId }, Date.now() - 7_200_000, 3600);
    expect(await h.call("GET", "/metadata/taskdefs", { token: old })).toMatchObject({ status: 401, body: { error: "EXPIRED_TOKEN" } });
    const fresh = await tokenFor(created.key);
    expect((await h.call("GET", "/metadata/taskdefs", { token: fresh })).status).toBe(200);
    await revokeApiKey(t.db, { namespaceId: ns.id, apiKeyId: created.id, actor: { type: "system", id: "test" } });
    expect(await h.call("GET", "/metadata/taskdefs", { token: fresh })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
    expect(await h.call("POST", "/token", { body: keyPair(created.key) })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
  });

  it("the API key itself works too, as X-Authorization or a Bearer token", async () => {
    expect((await h.call("GET", "/metadata/taskdefs", { token: adminKey })).status).toBe(200);
    expect((await h.call("GET", "/metadata/taskdefs", { headers: { authorization: `Bearer ${adminKey}` } })).status).toBe(200);
    expect(await h.call("GET", "/metadata/taskdefs", { headers: { authorization: `Bearer ${adminKey}x` } })).toMatchObject({ status: 401, body: { error: "INVALID_TOKEN" } });
  });

  it("a worker key may poll and update but not register or start (403)", async () => {
    expect((await h.call("GET", "/tasks/poll/batch/cd_nothing?timeout=0", { token: worker })).status).toBe(200);
    expect(await h.call("POST", "/metadata/workflow", { token: worker, body: twoStep(uniqueName("denied")) })).toMatchObject({ status: 403 });
    expect(await h.call("POST", "/workflow", { token: worker, body: { name: "anything" } })).toMatchObject({ status: 403 });
  });
});

describe("metadata", () => {
  it("registers a WorkflowDef that opens in the editor; 409 for the same version, overwrite keeps versions immutable", async () => {
    const name = uniqueName("meta");
    expect(await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(name) })).toMatchObject({ status: 200 });
    const stored = await getWorkflowDefinition(t.db, ns.id, name, 1);
    expect(stored).toBeDefined();
    // The graph form, laid out: what the visual editor opens.
    expect(validateDefinition(stored!.graph).ok).toBe(true);
    expect((stored!.graph as { nodes: { position: unknown }[] }).nodes.every((n) => typeof n.position === "object")).toBe(true);

    const again = await h.call<{ message: string }>("POST", "/metadata/workflow", { token: admin, body: twoStep(name) });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("already exists");
    // Registering the same definition again with overwrite changes nothing.
    expect((await h.call("POST", "/metadata/workflow?overwrite=true", { token: admin, body: twoStep(name) })).status).toBe(200);
    expect(await getWorkflowDefinition(t.db, ns.id, name, 2)).toBeUndefined();
    // A changed definition under an existing version becomes the next one; version 1 keeps its graph.
    expect((await h.call("POST", "/metadata/workflow?overwrite=true", { token: admin, body: twoStep(name, "cd_a", "cd_c") })).status).toBe(200);
    const latest = await h.call<{ name: string; version: number; tasks: { name: string; taskReferenceName: string }[] }>("GET", `/metadata/workflow/${name}`, { token: admin });
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ name, version: 2 });
    expect(latest.body.tasks.map((task) => [task.taskReferenceName, task.name])).toEqual([
      ["first", "cd_a"],
      ["second", "cd_c"],
    ]);
    const first = await h.call<{ version: number; tasks: { name: string }[] }>("GET", `/metadata/workflow/${name}?version=1`, { token: admin });
    expect(first.body.tasks[1]!.name).toBe("cd_b");
    expect(await h.call("GET", `/metadata/workflow/${name}?version=9`, { token: admin })).toMatchObject({ status: 404 });
    const all = await h.call<{ name: string; version: number }[]>("GET", "/metadata/workflow", { token: admin });
    expect(all.body.find((d) => d.name === name)).toMatchObject({ version: 2 });
    expect((await h.call<{ name: string }[]>("GET", "/metadata/workflow", { token: stranger })).body.find((d) => d.name === name)).toBeUndefined();
  });

  it("a graph drawn in node-flow with no nested Conductor form answers 409 naming why, and is left out of the list", async () => {
    const name = uniqueName("drawn");
    const at = { x: 0, y: 0 };
    const registered = await registerWorkflowDefinition(t.db, {
      namespaceId: ns.id,
      definition: {
        schemaVersion: 1,
        name,
        nodes: ["a", "b", "c"].map((ref) => ({ ref, type: "SIMPLE", name: `cd_${ref}`, position: at })),
        // a → c is redundant beside a → b → c: Conductor's task lists cannot say it.
        edges: [
          { source: "a", target: "b" },
          { source: "b", target: "c" },
          { source: "a", target: "c" },
        ],
      },
    });
    expect(registered.ok).toBe(true);
    const answer = await h.call<{ message: string }>("GET", `/metadata/workflow/${name}`, { token: admin });
    expect(answer.status).toBe(409);
    expect(answer.body.message).toContain("no Conductor WorkflowDef form");
    expect((await h.call<{ name: string }[]>("GET", "/metadata/workflow", { token: admin })).body.map((d) => d.name)).not.toContain(name);
  });

  it("PUT registers a list and answers a BulkResponse; one malformed entry stores nothing", async () => {
    const a = uniqueName("bulk");
    const b = uniqueName("bulk");
    const ok = await h.call("PUT", "/metadata/workflow", { token: admin, body: [twoStep(a), twoStep(b)] });
    expect(ok).toMatchObject({ status: 200, body: { bulkSuccessfulResults: [a, b] } });
    const c = uniqueName("bulk");
    const bad = await h.call<{ validationErrors: { path: string }[] }>("PUT", "/metadata/workflow", {
      token: admin,
      body: [twoStep(c), { name: uniqueName("broken"), tasks: [{ taskReferenceName: "x", type: "KAFKA_PUBLISH" }] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.validationErrors.some((e) => e.path.startsWith("[1]"))).toBe(true);
    expect(await getWorkflowDefinition(t.db, ns.id, c)).toBeUndefined();
  });

  it("a malformed WorkflowDef answers 400 listing every problem, never a 500", async () => {
    const answer = await h.call<{ status: number; message: string; validationErrors: { path: string; message: string }[] }>("POST", "/metadata/workflow", {
      token: admin,
      body: {
        name: uniqueName("malformed"),
        tasks: [
          { name: "t1", taskReferenceName: "dup", type: "SIMPLE" },
          { name: "t2", taskReferenceName: "dup", type: "SIMPLE" },
          { name: "t3", taskReferenceName: "sw", type: "SWITCH", evaluatorType: "value-param", expression: "x", decisionCases: { a: [{ taskReferenceName: "k", type: "JDBC" }] } },
        ],
      },
    });
    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body.validationErrors.length).toBeGreaterThanOrEqual(2);
    const text = JSON.stringify(answer.body.validationErrors);
    expect(text).toContain("JDBC");
    expect(text).toContain("dup");
    for (const body of [[], "not json at all", { tasks: "nope" }, { name: 5 }]) {
      const bad = await h.call("POST", "/metadata/workflow", { token: admin, ...(typeof body === "string" ? { rawBody: body, headers: { "content-type": "application/json" } } : { body }) });
      expect(bad.status, JSON.stringify(bad.body)).toBe(400);
      expect(bad.contentType).toMatch(/^application\/json/);
    }
  });

  it("task definitions: POST a list, GET one and all, PUT an existing one; bad ones answer 400 with every problem", async () => {
    const name = uniqueName("taskdef");
    const posted = await h.call("POST", "/metadata/taskdefs", {
      token: admin,
      body: [{ name, retryCount: 2, retryLogic: "FIXED", retryDelaySeconds: 0, timeoutSeconds: 600, responseTimeoutSeconds: 30, concurrentExecLimit: null, createdBy: null, ownerApp: null }],
    });
    expect(posted.status).toBe(200);
    const got = await h.call<Record<string, unknown>>("GET", `/metadata/taskdefs/${name}`, { token: admin });
    expect(got).toMatchObject({ status: 200, body: { name, retryCount: 2, retryDelaySeconds: 0, timeoutSeconds: 600, responseTimeoutSeconds: 30, timeoutPolicy: "TIME_OUT_WF" } });
    expect(typeof got.body.createTime).toBe("number");
    expect((await h.call("PUT", "/metadata/taskdefs", { token: admin, body: { name, retryCount: 5 } })).status).toBe(200);
    expect((await h.call<{ retryCount: number }>("GET", `/metadata/taskdefs/${name}`, { token: admin })).body.retryCount).toBe(5);
    const all = await h.call<{ name: string }[]>("GET", "/metadata/taskdefs", { token: admin });
    expect(all.body.map((d) => d.name)).toContain(name);
    expect(await h.call("PUT", "/metadata/taskdefs", { token: admin, body: { name: uniqueName("absent") } })).toMatchObject({ status: 404 });
    expect(await h.call("GET", "/metadata/taskdefs/no_such_def", { token: admin })).toMatchObject({ status: 404 });
    const bad = await h.call<{ validationErrors: { path: string }[] }>("POST", "/metadata/taskdefs", {
      token: admin,
      body: [{ name: "" }, { name: uniqueName("bad"), retryCount: -1, retryLogic: "SOMETIMES", timeoutSeconds: 10, responseTimeoutSeconds: 20 }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.validationErrors.map((e) => e.path).sort()).toEqual(["[0].name", "[1].responseTimeoutSeconds", "[1].retryCount", "[1].retryLogic"]);
  });
});

describe("workflows: start, read, search, actions", () => {
  let name: string;
  beforeAll(async () => {
    name = uniqueName("wf");
    expect((await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(name, "cd_wf_a", "cd_wf_b") })).status).toBe(200);
  });

  it("POST /workflow answers the id as text/plain; GET reads it back in Conductor's Workflow shape", async () => {
    const started = await h.call<string>("POST", "/workflow", { token: admin, body: { name, version: 1, input: { x: 1 }, correlationId: "corr-1", priority: 7, taskToDomain: {}, workflowDef: null } });
    expect(started.status).toBe(200);
    expect(started.contentType).toMatch(/^text\/plain/);
    const id = started.body;
    await decide();
    const wf = await h.call<Record<string, unknown> & { tasks: Record<string, unknown>[] }>("GET", `/workflow/${id}`, { token: admin });
    expect(wf.status).toBe(200);
    expect(wf.contentType).toMatch(/^application\/json/);
    expect(wf.body).toMatchObject({ workflowId: id, workflowName: name, workflowVersion: 1, status: "RUNNING", correlationId: "corr-1", priority: 7, input: { x: 1 }, endTime: 0 });
    expect(typeof wf.body.createTime).toBe("number");
    expect(wf.body.tasks).toHaveLength(1);
    expect(wf.body.tasks[0]).toMatchObject({ taskType: "cd_wf_a", taskDefName: "cd_wf_a", referenceTaskName: "first", status: "SCHEDULED", seq: 1, retryCount: 0, inputData: { x: 1 }, workflowInstanceId: id, workflowType: name, correlationId: "corr-1", startTime: 0 });
    const light = await h.call<{ tasks: unknown[] }>("GET", `/workflow/${id}?includeTasks=false`, { token: admin });
    expect(light.body.tasks).toEqual([]);
    expect(await h.call("GET", `/workflow/${id}/status?includeOutput=true`, { token: admin })).toMatchObject({ status: 200, body: { workflowId: id, status: "RUNNING", correlationId: "corr-1", output: {} } });
  });

  it("POST /workflow/{name} takes the input as the body and version, correlationId, priority as query", async () => {
    const started = await h.call<string>("POST", `/workflow/${name}?version=1&correlationId=byname&priority=3`, { token: admin, body: { x: 2 } });
    expect(started.status).toBe(200);
    const wf = await h.call("GET", `/workflow/${started.body}?includeTasks=false`, { token: admin });
    expect(wf.body).toMatchObject({ correlationId: "byname", priority: 3, input: { x: 2 } });
  });

  it("idempotencyKey: RETURN_EXISTING answers the same id, FAIL a 409", async () => {
    const request = { name, input: {}, idempotencyKey: uniqueName("key"), idempotencyStrategy: "RETURN_EXISTING" };
    const a = await h.call<string>("POST", "/workflow", { token: admin, body: request });
    const b = await h.call<string>("POST", "/workflow", { token: admin, body: request });
    expect(b.body).toBe(a.body);
    expect(await h.call("POST", "/workflow", { token: admin, body: { ...request, idempotencyStrategy: "FAIL" } })).toMatchObject({ status: 409 });
  });

  it("bad starts: unknown workflow 404, bad fields 400 naming each, unsupported fields refused by name", async () => {
    expect(await h.call("POST", "/workflow", { token: admin, body: { name: "no_such_workflow" } })).toMatchObject({ status: 404 });
    const bad = await h.call<{ validationErrors: { path: string }[] }>("POST", "/workflow", { token: admin, body: { name, priority: 500, input: [1], taskToDomain: { "*": "blue" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.validationErrors.map((e) => e.path).sort()).toEqual(["body.input", "body.priority", "body.taskToDomain"]);
    expect(await h.call("GET", "/workflow/not-a-uuid", { token: admin })).toMatchObject({ status: 404 });
  });

  it("an inline workflowDef runs unregistered: stored once under its content's name, hidden from the definitions list", async () => {
    const adHoc = uniqueName("adhoc");
    const workflowDef = { name: adHoc, version: 1, schemaVersion: 2, tasks: [{ name: "cd_adhoc_step", taskReferenceName: "step", type: "SIMPLE", inputParameters: { x: "${workflow.input.x}" } }] };
    const ids: string[] = [];
    for (const x of [1, 2]) {
      const started = await h.call<string>("POST", "/workflow", { token: admin, body: { name: adHoc, input: { x }, workflowDef } });
      expect(started.status).toBe(200);
      ids.push(started.body);
    }
    await decide();
    const runs = await Promise.all(ids.map((id) => h.call<{ workflowName: string; status: string; tasks: Record<string, unknown>[] }>("GET", `/workflow/${id}`, { token: admin })));
    expect(runs[0]!.body.workflowName).toMatch(new RegExp(`^${adHoc}:inline-[0-9a-f]{16}$`));
    expect(runs[1]!.body.workflowName).toBe(runs[0]!.body.workflowName);
    expect(runs.map((r) => r.body.tasks[0])).toMatchObject([
      { taskType: "cd_adhoc_step", status: "SCHEDULED", inputData: { x: 1 } },
      { taskType: "cd_adhoc_step", status: "SCHEDULED", inputData: { x: 2 } },
    ]);
    const listed = await h.call<{ name: string }[]>("GET", "/metadata/workflow", { token: admin });
    expect(listed.body.some((d) => d.name.startsWith(adHoc))).toBe(false);

    const broken = await h.call<{ validationErrors: { path: string }[] }>("POST", "/workflow", { token: admin, body: { name: adHoc, workflowDef: { name: adHoc, tasks: [] } } });
    expect(broken.status).toBe(400);
    expect(broken.body.validationErrors.every((e) => e.path.startsWith("workflowDef"))).toBe(true);
  });

  it("search answers {totalHits, results} of WorkflowSummary, filtered by the query; a query it cannot read is a 400", async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await h.call<string>("POST", "/workflow", { token: admin, body: { name, input: { i }, correlationId: `search-${i}` } })).body);
    const found = await h.call<{ totalHits: number; results: Record<string, unknown>[] }>(
      "GET",
      `/workflow/search?size=2&query=${encodeURIComponent(`workflowType IN (${name}) AND status IN (RUNNING) AND correlationId IN (search-0,search-1,search-2)`)}`,
      { token: admin },
    );
    expect(found.status).toBe(200);
    expect(found.body.totalHits).toBe(3);
    expect(found.body.results).toHaveLength(2);
    expect(found.body.results[0]).toMatchObject({ workflowId: ids[2], workflowType: name, version: 1, status: "RUNNING", correlationId: "search-2", input: JSON.stringify({ i: 2 }) });
    const page2 = await h.call<{ results: { workflowId: string }[] }>("GET", `/workflow/search?start=2&size=2&query=${encodeURIComponent(`correlationId IN (search-0,search-1,search-2)`)}`, { token: admin });
    expect(page2.body.results.map((r) => r.workflowId)).toEqual([ids[0]]);
    const bad = await h.call("GET", `/workflow/search?query=${encodeURIComponent("status = SLEEPING OR x = 1")}`, { token: admin });
    expect(bad.status).toBe(400);
    // Another namespace's runs are not found.
    expect((await h.call<{ totalHits: number }>("GET", `/workflow/search?query=${encodeURIComponent(`workflowType IN (${name})`)}`, { token: stranger })).body.totalHits).toBe(0);
  });

  it("skiptask completes a scheduled task with the given output; rerun from a task runs it and what follows again", async () => {
    const own = uniqueName("skip");
    await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(own, "cd_skip_a", "cd_skip_b") });
    const id = (await h.call<string>("POST", "/workflow", { token: admin, body: { name: own, input: { x: 4 } } })).body;
    await decide();
    const [first] = (await h.call<{ taskId: string }[]>("GET", "/tasks/poll/batch/cd_skip_a?timeout=0", { token: worker })).body;
    expect((await h.call("POST", "/tasks", { token: worker, body: { workflowInstanceId: id, taskId: first!.taskId, status: "COMPLETED", outputData: { y: 1 } } })).status).toBe(200);
    await decide();
    expect((await h.call("PUT", `/workflow/${id}/skiptask/second`, { token: admin, body: { taskInput: {}, taskOutput: { z: 9 } } })).status).toBe(200);
    await decide();
    const skipped = await h.call<{ status: string; output: unknown; tasks: { referenceTaskName: string; status: string }[] }>("GET", `/workflow/${id}`, { token: admin });
    expect(skipped.body).toMatchObject({ status: "COMPLETED", output: { result: 9 } });
    expect(await h.call("PUT", `/workflow/${id}/skiptask/second`, { token: admin })).toMatchObject({ status: 409 });

    const rerun = await h.call<string>("POST", `/workflow/${id}/rerun`, { token: admin, body: { reRunFromWorkflowId: id, reRunFromTaskId: first!.taskId, workflowInput: { x: 5 } } });
    expect(rerun).toMatchObject({ status: 200, body: id });
    await decide();
    const again = await h.call<{ status: string; tasks: { referenceTaskName: string; status: string; inputData: unknown }[] }>("GET", `/workflow/${id}`, { token: admin });
    expect(again.body.status).toBe("RUNNING");
    expect(again.body.tasks.map((task) => [task.referenceTaskName, task.status, task.inputData])).toEqual([["first", "SCHEDULED", { x: 5 }]]);
    expect(await h.call("POST", `/workflow/${id}/rerun`, { token: admin, body: { reRunFromTaskId: "0191d6a4-0000-7000-8000-0000000000ab" } })).toMatchObject({ status: 404 });
  });

  it("pause, resume, terminate, restart; the wrong state is a 409, an unknown workflow a 404", async () => {
    const id = (await h.call<string>("POST", "/workflow", { token: admin, body: { name, input: { x: 3 } } })).body;
    await decide();
    expect((await h.call("PUT", `/workflow/${id}/pause`, { token: admin })).status).toBe(200);
    expect((await h.call("GET", `/workflow/${id}?includeTasks=false`, { token: admin })).body).toMatchObject({ status: "PAUSED" });
    expect((await h.call("PUT", `/workflow/${id}/resume`, { token: admin })).status).toBe(200);
    expect(await h.call("PUT", `/workflow/${id}/resume`, { token: admin })).toMatchObject({ status: 409 });
    expect((await h.call("DELETE", `/workflow/${id}?reason=${encodeURIComponent("enough")}`, { token: admin })).status).toBe(200);
    const ended = await h.call<{ status: string; reasonForIncompletion: string; tasks: { status: string }[] }>("GET", `/workflow/${id}`, { token: admin });
    expect(ended.body.status).toBe("TERMINATED");
    expect(ended.body.reasonForIncompletion).toContain("enough");
    expect(ended.body.tasks.map((task) => task.status)).toEqual(["CANCELED"]);
    expect(await h.call("PUT", `/workflow/${id}/pause`, { token: admin })).toMatchObject({ status: 409 });
    expect((await h.call("POST", `/workflow/${id}/restart`, { token: admin })).status).toBe(200);
    expect((await h.call("GET", `/workflow/${id}?includeTasks=false`, { token: admin })).body).toMatchObject({ status: "RUNNING" });
    expect(await h.call("PUT", "/workflow/0191d6a4-0000-7000-8000-0000000000aa/pause", { token: admin })).toMatchObject({ status: 404 });
  });
});

describe("completing a task by reference name", () => {
  it("POST /tasks/{workflowId}/{ref}/COMPLETED signals a WAIT task with its output; an unknown ref is a 404", async () => {
    const name = uniqueName("signal");
    await h.call("POST", "/metadata/workflow", {
      token: admin,
      body: { name, version: 1, tasks: [{ name: "hold", taskReferenceName: "hold", type: "WAIT" }], outputParameters: { said: "${hold.output.said}" } },
    });
    const id = (await h.call<string>("POST", "/workflow", { token: admin, body: { name } })).body;
    await decide();
    const signalled = await h.call<string>("POST", `/workflow/${id}`.replace("/workflow/", "/tasks/") + "/hold/COMPLETED", { token: worker, body: { said: "go" } });
    expect(signalled.status, JSON.stringify(signalled.body)).toBe(200);
    expect(signalled.contentType).toMatch(/^text\/plain/);
    await decide();
    expect((await h.call("GET", `/workflow/${id}`, { token: admin })).body).toMatchObject({ status: "COMPLETED", output: { said: "go" }, tasks: [{ taskType: "WAIT", status: "COMPLETED", taskId: signalled.body }] });
    expect(await h.call("POST", `/tasks/${id}/nope/COMPLETED`, { token: worker, body: {} })).toMatchObject({ status: 404 });
    expect(await h.call("POST", `/tasks/${id}/hold/DONE`, { token: worker, body: {} })).toMatchObject({ status: 400 });
  });
});

describe("worker protocol: bad input and isolation", () => {
  it("an unknown task type polls empty: 204 for a single poll, 200 [] for a batch; a built-in type too", async () => {
    const single = await h.call("GET", "/tasks/poll/no_such_type?workerid=w", { token: worker });
    expect(single.status).toBe(204);
    expect(await h.call("GET", "/tasks/poll/batch/no_such_type?count=5&timeout=0", { token: worker })).toMatchObject({ status: 200, body: [] });
    expect(await h.call("GET", "/tasks/poll/batch/HTTP?timeout=0", { token: worker })).toMatchObject({ status: 200, body: [] });
  });

  it("a batch poll longer than 5 s, or with a bad count, is a 400", async () => {
    const answer = await h.call<{ validationErrors: { path: string; message: string }[] }>("GET", "/tasks/poll/batch/x?timeout=6000&count=0", { token: worker });
    expect(answer.status).toBe(400);
    expect(answer.body.validationErrors.map((e) => e.path).sort()).toEqual(["query.count", "query.timeout"]);
  });

  it("a TaskResult for an unknown task, or one of another namespace, answers 404; a malformed one 400", async () => {
    const unknown = { workflowInstanceId: "0191d6a4-0000-7000-8000-0000000000aa", taskId: "0191d6a4-0000-7000-8000-0000000000ab", status: "COMPLETED" };
    expect(await h.call("POST", "/tasks", { token: worker, body: unknown })).toMatchObject({ status: 404 });
    expect(await h.call("POST", "/tasks", { token: worker, body: { ...unknown, taskId: "not-a-uuid" } })).toMatchObject({ status: 404 });
    const malformed = await h.call<{ validationErrors: { path: string }[] }>("POST", "/tasks", { token: worker, body: { taskId: "", status: "DONE", outputData: [1], callbackAfterSeconds: -1 } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.validationErrors.map((e) => e.path).sort()).toEqual(["body.callbackAfterSeconds", "body.outputData", "body.status", "body.taskId", "body.workflowInstanceId"]);
    expect(await h.call("POST", "/tasks", { token: worker, rawBody: "{", headers: { "content-type": "application/json" } })).toMatchObject({ status: 400 });

    const name = uniqueName("iso");
    await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(name, "cd_iso_a", "cd_iso_b") });
    const id = (await h.call<string>("POST", "/workflow", { token: admin, body: { name, input: { x: 1 } } })).body;
    await decide();
    // The other namespace's key polls the same type name and gets nothing; it cannot see or update the task.
    expect(await h.call("GET", "/tasks/poll/batch/cd_iso_a?timeout=0", { token: stranger })).toMatchObject({ status: 200, body: [] });
    const [task] = (await h.call<{ taskId: string }[]>("GET", "/tasks/poll/batch/cd_iso_a?timeout=0&workerid=w1", { token: worker })).body;
    expect(task).toBeDefined();
    expect(await h.call("GET", `/tasks/${task!.taskId}`, { token: stranger })).toMatchObject({ status: 404 });
    expect(await h.call("GET", `/workflow/${id}`, { token: stranger })).toMatchObject({ status: 404 });
    expect(await h.call("POST", "/tasks", { token: stranger, body: { workflowInstanceId: id, taskId: task!.taskId, status: "COMPLETED" } })).toMatchObject({ status: 404 });
    expect(await h.call("POST", `/tasks/${task!.taskId}/log`, { token: stranger, rawBody: "nope" })).toMatchObject({ status: 404 });
    // Its own worker completes it; a repeated update of the ended task changes nothing and succeeds, as in Conductor.
    const done = await h.call("POST", "/tasks", { token: worker, body: { workflowInstanceId: id, taskId: task!.taskId, status: "COMPLETED", outputData: { y: 5 } } });
    expect(done).toMatchObject({ status: 200, body: task!.taskId });
    expect(done.contentType).toMatch(/^text\/plain/);
    const repeat = await h.call("POST", "/tasks", { token: worker, body: { workflowInstanceId: id, taskId: task!.taskId, status: "FAILED" } });
    expect(repeat.status).toBe(200);
    expect((await h.call<{ status: string; outputData: unknown }>("GET", `/tasks/${task!.taskId}`, { token: worker })).body).toMatchObject({ status: "COMPLETED", outputData: { y: 5 } });
  });

  it("a batch poll parks until a task arrives (long-poll), then answers it", async () => {
    const name = uniqueName("lp");
    await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(name, "cd_lp_a", "cd_lp_b") });
    const begun = Date.now();
    const polled = h.call<{ taskType: string; inputData: unknown }[]>("GET", "/tasks/poll/batch/cd_lp_a?count=2&timeout=4000&workerid=lp", { token: worker });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await h.call("POST", "/workflow", { token: admin, body: { name, input: { x: 9 } } });
    await decide();
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(1);
    expect(answer.body[0]).toMatchObject({ taskType: "cd_lp_a", inputData: { x: 9 } });
    expect(Date.now() - begun).toBeLessThan(3900);
    // And an empty one waits out its timeout, then answers [].
    const idle = Date.now();
    expect((await h.call("GET", "/tasks/poll/batch/cd_lp_nothing?timeout=600", { token: worker })).body).toEqual([]);
    expect(Date.now() - idle).toBeGreaterThanOrEqual(550);
  });

  it("queue sizes count the tasks waiting per type", async () => {
    const name = uniqueName("qs");
    await h.call("POST", "/metadata/workflow", { token: admin, body: twoStep(name, "cd_qs_a", "cd_qs_b") });
    for (let i = 0; i < 2; i++) await h.call("POST", "/workflow", { token: admin, body: { name, input: { x: i } } });
    await decide();
    expect(await h.call("GET", "/tasks/queue/sizes?taskType=cd_qs_a&taskType=cd_qs_b", { token: admin })).toMatchObject({ status: 200, body: { cd_qs_a: 2, cd_qs_b: 0 } });
    expect(await h.call("GET", "/tasks/queue/size?taskType=cd_qs_a", { token: admin })).toMatchObject({ status: 200, body: 2 });
    expect((await h.call<Record<string, number>>("GET", "/tasks/queue/all", { token: admin })).body.cd_qs_a).toBe(2);
    expect((await h.call<Record<string, number>>("GET", "/tasks/queue/all", { token: stranger })).body.cd_qs_a).toBeUndefined();
  });
});
