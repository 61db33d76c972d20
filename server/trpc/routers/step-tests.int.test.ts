import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { WorkflowDefinition } from "@/engine";
import { saveAiProvider } from "../../ai/ai-providers";
import type { Principal } from "../../auth/principal";
import { putSecret, sealingKeysOf } from "../../secrets/secrets";
import { callerAs, insertTestUser, testConfig, userPrincipal } from "../testing";

const database = useTestDatabase();
let owner: Principal;

const caller = () => callerAs(database.db, database.url, owner);

/** Every row a run would leave: a step test must leave none. */
async function runRows(): Promise<number[]> {
  const count = async (table: "WorkflowExecutions" | "TaskExecutions" | "TaskQueues" | "DecideQueues") =>
    Number((await database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow()).n);
  return Promise.all([count("WorkflowExecutions"), count("TaskExecutions"), count("TaskQueues"), count("DecideQueues")]);
}

let server: ReturnType<typeof createServer>;
let url = "";

const draft = (): WorkflowDefinition => ({
  schemaVersion: 1,
  name: "step-tests",
  nodes: [
    { ref: "fetch", type: "HTTP", position: { x: 0, y: 0 }, httpRequest: { uri: `${url}/users/\${workflow.input.id}`, method: "GET" } },
    { ref: "shout", type: "INLINE", position: { x: 0, y: 100 }, evaluatorType: "graaljs", expression: "$.name.toUpperCase() + '!'", input: { name: "${fetch.output.response.body.name}" } },
    { ref: "pick", type: "JSON_JQ_TRANSFORM", position: { x: 0, y: 200 }, queryExpression: ".items | map(.id)", input: { items: "${workflow.input.items}" } },
    { ref: "ship", type: "SIMPLE", name: "ship_order", position: { x: 0, y: 300 }, input: { who: "${shout.output.result}" } },
    { ref: "loop_forever", type: "INLINE", position: { x: 0, y: 400 }, evaluatorType: "graaljs", expression: "while (true) {}" },
  ],
  edges: [
    { source: "fetch", target: "shout" },
    { source: "shout", target: "pick" },
    { source: "pick", target: "ship" },
    { source: "ship", target: "loop_forever" },
  ],
  pins: { fetch: { response: { statusCode: 200, body: { name: "ada" } } } },
});

beforeAll(async () => {
  owner = userPrincipal(await insertTestUser(database.db, "owner@example.com", { isOwner: true }));
  await database.db.insertInto("Namespaces").values({ name: "default" }).onConflict((oc) => oc.column("name").doNothing()).execute();
  server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ name: "from-server", path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("stepTests.run", () => {
  it("runs an INLINE step in the sandbox on its upstream's pinned output, and stores nothing", async () => {
    const before = await runRows();
    const result = await caller().stepTests.run({ namespace: "default", definition: draft(), ref: "shout", sample: {} });
    expect(result).toMatchObject({ ok: true, taskType: "INLINE", status: "COMPLETED", input: { name: "ada" }, output: { result: "ADA!" }, mocked: false });
    expect(await runRows()).toEqual(before);
  });

  it("runs jq on the sample's workflow input", async () => {
    const result = await caller().stepTests.run({ namespace: "default", definition: draft(), ref: "pick", sample: { input: { items: [{ id: 1 }, { id: 2 }] } } });
    expect(result).toMatchObject({ status: "COMPLETED", output: { result: [1, 2] } });
  });

  it("sends an HTTP step through the SSRF guard: loopback is refused unless the installation allows private networks", async () => {
    const result = await caller().stepTests.run({ namespace: "default", definition: draft(), ref: "fetch", sample: { input: { id: 7 } } });
    expect(result).toMatchObject({ taskType: "HTTP", status: "FAILED_WITH_TERMINAL_ERROR", input: { http_request: { uri: `${url}/users/7` } } });
    expect(result.reason).toMatch(/private|loopback|refused|not allowed/i);
  });

  it("gives a worker task its mocked output, and asks for one when none is given", async () => {
    const result = await caller().stepTests.run({ namespace: "default", definition: draft(), ref: "ship", sample: { outputs: { shout: { result: "BOB!" } } }, mockOutput: { shipped: true } });
    expect(result).toMatchObject({ taskType: "SIMPLE", status: "COMPLETED", input: { who: "BOB!" }, output: { shipped: true }, mocked: true });
    await expect(caller().stepTests.run({ namespace: "default", definition: draft(), ref: "ship", sample: {} })).rejects.toThrow(/mocked output/);
  });

  it("stops a script that never ends at the test's time limit, as a failed step", async () => {
    const result = await caller().stepTests.run({ namespace: "default", definition: draft(), ref: "loop_forever", sample: {} });
    expect(result).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/timed out/) as unknown });
  });

  it("refuses a step whose own node is invalid, with the problems", async () => {
    const broken = draft();
    broken.nodes[1] = { ...broken.nodes[1]!, expression: "" } as WorkflowDefinition["nodes"][number];
    const error = await caller()
      .stepTests.run({ namespace: "default", definition: broken, ref: "shout", sample: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe("BAD_REQUEST");
  });
});

/** A worker task feeds a script, whose result a SWITCH routes on: the path a test run must take with `lookup` pinned. */
const routed = (): WorkflowDefinition => ({
  schemaVersion: 1,
  name: "routed-order",
  nodes: [
    { ref: "lookup", type: "SIMPLE", name: "lookup_customer", position: { x: 0, y: 0 }, input: { id: "${workflow.input.customerId}" } },
    {
      ref: "score",
      type: "INLINE",
      position: { x: 0, y: 100 },
      evaluatorType: "graaljs",
      expression: "$.orders * 10 + $.bonus",
      input: { orders: "${lookup.output.orders}", bonus: "${workflow.input.bonus}" },
    },
    { ref: "route", type: "SWITCH", position: { x: 0, y: 200 }, evaluatorType: "javascript", expression: "$.score >= 50 ? 'gold' : 'plain'", cases: ["gold", "plain"], input: { score: "${score.output.result}" } },
    { ref: "gold_offer", type: "INLINE", position: { x: -100, y: 300 }, evaluatorType: "graaljs", expression: "'gold for ' + $.name", input: { name: "${lookup.output.name}" } },
    { ref: "plain_offer", type: "SIMPLE", name: "send_plain_offer", position: { x: 100, y: 300 } },
  ],
  edges: [
    { source: "lookup", target: "score" },
    { source: "score", target: "route" },
    { source: "route", target: "gold_offer", case: "gold" },
    { source: "route", target: "plain_offer", case: "plain" },
  ],
  outputParameters: { offer: "${gold_offer.output.result}", score: "${score.output.result}" },
  pins: { lookup: { name: "Ada", orders: 5 } },
});

describe("stepTests.run on a chat completion", () => {
  const KEY = "sk-step-test-9c41d0";
  const seen: { authorization: string | undefined; body: Record<string, unknown> }[] = [];
  const answers: { status: number; body: unknown }[] = [];
  let model: ReturnType<typeof createServer>;
  let modelUrl = "";

  /** An OpenAI-compatible server on loopback: records each request, answers the next scripted answer or a default. */
  beforeAll(async () => {
    model = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        seen.push({ authorization: req.headers.authorization, body: JSON.parse(text) as Record<string, unknown> });
        const answer = answers.shift() ?? {
          status: 200,
          body: { choices: [{ message: { role: "assistant", content: "Hello, Ada!" }, finish_reason: "stop" }], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } },
        };
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
    modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    const { id: namespaceId } = await database.db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
    const actor = { type: "system" as const, id: "test" };
    // Sealed under the instance secret the caller's web config has, as Settings → Secrets would.
    await putSecret(database.db, sealingKeysOf(testConfig(database.url)), { namespaceId, name: "LOCAL_KEY", value: KEY, actor, updatedBy: "test" });
    const saved = await saveAiProvider(database.db, {
      namespaceId,
      name: "local",
      config: { kind: "openai", baseUrl: modelUrl, apiKeySecret: "LOCAL_KEY", models: ["gpt-test"], allowPrivateNetwork: true },
      actor,
      updatedBy: "test",
    });
    if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
  });
  afterAll(async () => {
    model.closeAllConnections();
    await new Promise((resolve) => model.close(resolve));
  });

  const chat = (llm: Record<string, unknown>): WorkflowDefinition => ({
    schemaVersion: 1,
    name: "chat-step",
    nodes: [
      { ref: "lookup", type: "SIMPLE", name: "lookup_user", position: { x: 0, y: 0 } },
      {
        ref: "greet",
        type: "LLM_CHAT_COMPLETE",
        position: { x: 0, y: 100 },
        llm: {
          llmProvider: "local",
          model: "gpt-test",
          instructions: "Be brief.",
          messages: [
            { role: "system", message: "You greet ${lookup.output.title}s." },
            { role: "user", message: "Greet ${workflow.input.name}." },
          ],
          temperature: 0.1,
          ...llm,
        },
      },
    ],
    edges: [{ source: "lookup", target: "greet" }],
    pins: { lookup: { title: "doctor" } },
  });

  it("calls the provider with messages resolved from the sample and pins, and shows the answer, usage and latency without the key", async () => {
    seen.length = 0;
    const before = await runRows();
    const result = await caller().stepTests.run({ namespace: "default", definition: chat({}), ref: "greet", sample: { input: { name: "Ada" } } });
    expect(result).toMatchObject({
      ok: true,
      taskType: "LLM_CHAT_COMPLETE",
      status: "COMPLETED",
      input: { llmProvider: "local", model: "gpt-test", messages: [{ role: "system", message: "You greet doctors." }, { role: "user", message: "Greet Ada." }] },
      output: { result: "Hello, Ada!", finishReason: "stop", llmProvider: "local", model: "gpt-test", tokenUsage: { promptTokens: 12, completionTokens: 3, totalTokens: 15 } },
      reason: null,
    });
    expect(typeof result.output.latencyMs).toBe("number");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.authorization).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.body).toMatchObject({
      model: "gpt-test",
      temperature: 0.1,
      messages: [
        { role: "system", content: "Be brief.\n\nYou greet doctors." },
        { role: "user", content: "Greet Ada." },
      ],
    });
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(await runRows()).toEqual(before);
  });

  it("gives a provider's 4xx as the step's reason, with the key redacted even when the provider echoes it", async () => {
    answers.push({ status: 400, body: { error: { message: `context too long for key ${KEY}` } } });
    const result = await caller().stepTests.run({ namespace: "default", definition: chat({}), ref: "greet", sample: { input: { name: "Ada" } } });
    expect(result).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR" });
    expect(result.reason).toMatch(/400/);
    expect(result.reason).toContain("context too long for key");
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it("fails a 429 at once, saying a run would retry, instead of waiting", async () => {
    answers.push({ status: 429, body: { error: { message: "slow down" } } });
    const result = await caller().stepTests.run({ namespace: "default", definition: chat({}), ref: "greet", sample: { input: { name: "Ada" } } });
    expect(result).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/slow down.*a run would retry/) as unknown });
    expect(result.output).not.toHaveProperty("waiting");
  });

  it("names a missing provider and a model the provider does not allow", async () => {
    seen.length = 0;
    const missing = await caller().stepTests.run({ namespace: "default", definition: chat({ llmProvider: "nope" }), ref: "greet", sample: {} });
    expect(missing).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: expect.stringContaining('no AI provider "nope"') as unknown });
    const notAllowed = await caller().stepTests.run({ namespace: "default", definition: chat({ model: "gpt-big" }), ref: "greet", sample: {} });
    expect(notAllowed).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: expect.stringContaining('does not allow the model "gpt-big"') as unknown });
    expect(seen).toHaveLength(0);
  });
});

describe("stepTests.runWorkflow", () => {
  it("runs the draft with a pinned worker node feeding an INLINE and a SWITCH, and stores nothing", async () => {
    const before = await runRows();
    const result = await caller().stepTests.runWorkflow({ namespace: "default", definition: routed(), input: { customerId: "c-1", bonus: 3 } });
    expect(result.status).toBe("COMPLETED");
    expect(result.output).toEqual({ offer: "gold for Ada", score: 53 });
    expect(result.path).toEqual(["lookup", "score", "route", "gold_offer"]);
    expect(result.tasks.map((t) => [t.ref, t.type, t.status, t.pinned])).toEqual([
      ["lookup", "SIMPLE", "COMPLETED", true],
      ["score", "INLINE", "COMPLETED", false],
      ["route", "SWITCH", "COMPLETED", false],
      ["gold_offer", "INLINE", "COMPLETED", false],
      ["plain_offer", "SIMPLE", "SKIPPED", false],
    ]);
    const byRef = new Map(result.tasks.map((t) => [t.ref, t]));
    expect(byRef.get("lookup")).toMatchObject({ input: { id: "c-1" }, output: { name: "Ada", orders: 5 } });
    expect(byRef.get("score")).toMatchObject({ input: { orders: 5, bonus: 3 }, output: { result: 53 } });
    expect(byRef.get("route")?.output).toEqual({ evaluationResult: ["gold"] });
    expect(byRef.get("gold_offer")?.output).toEqual({ result: "gold for Ada" });
    expect(result).toMatchObject({ missingPins: [], ignoredPins: [], stopped: null, reason: null });
    expect(await runRows()).toEqual(before);
  });

  it("fails an unpinned worker task clearly, and the run with it", async () => {
    const definition = routed();
    definition.pins = {};
    const result = await caller().stepTests.runWorkflow({ namespace: "default", definition, input: { customerId: "c-1", bonus: 3 } });
    expect(result.status).toBe("FAILED");
    expect(result.path).toEqual(["lookup"]);
    expect(result.tasks[0]).toMatchObject({ ref: "lookup", status: "FAILED_WITH_TERMINAL_ERROR", pinned: false, reason: "no pin: pin an output for lookup or test it alone" });
    expect(result.missingPins).toEqual(["lookup"]);
    expect(result.reason).toContain("no pin: pin an output for lookup");
  });

  it("takes the other branch on other data, where the next worker task has no pin", async () => {
    const definition = routed();
    definition.pins = { lookup: { name: "Bob", orders: 1 }, route: { evaluationResult: ["gold"] } };
    const result = await caller().stepTests.runWorkflow({ namespace: "default", definition, input: { bonus: 0 } });
    expect(result.path).toEqual(["lookup", "score", "route", "plain_offer"]);
    expect(result.tasks.find((t) => t.ref === "route")?.output).toEqual({ evaluationResult: ["plain"] });
    expect(result).toMatchObject({ status: "FAILED", missingPins: ["plain_offer"], ignoredPins: ["route"] });
  });

  it("makes an unpinned HTTP call through the SSRF guard, and a pinned one not at all", async () => {
    const definition: WorkflowDefinition = {
      schemaVersion: 1,
      name: "http-test-run",
      nodes: [{ ref: "fetch", type: "HTTP", position: { x: 0, y: 0 }, httpRequest: { uri: `${url}/users/1`, method: "GET" } }],
      edges: [],
    };
    const guarded = await caller().stepTests.runWorkflow({ namespace: "default", definition, input: {} });
    expect(guarded.tasks[0]).toMatchObject({ ref: "fetch", status: "FAILED_WITH_TERMINAL_ERROR", pinned: false });
    expect(guarded.tasks[0]!.reason).toMatch(/private|loopback|refused|not allowed/i);
    const pinned = await caller().stepTests.runWorkflow({ namespace: "default", definition: { ...definition, pins: { fetch: { response: { body: { name: "pinned" } } } } }, input: {} });
    expect(pinned).toMatchObject({ status: "COMPLETED", path: ["fetch"], tasks: [{ pinned: true, output: { response: { body: { name: "pinned" } } } }] });
  });

  it("refuses an invalid draft, naming the problem", async () => {
    const definition = routed();
    definition.edges.push({ source: "gold_offer", target: "nowhere" });
    await expect(caller().stepTests.runWorkflow({ namespace: "default", definition, input: {} })).rejects.toThrow(/Fix the workflow first.*nowhere/);
  });
});

describe("stepTests.lastRunOutput", () => {
  async function insertRun(namespaceId: string, startedAt: Date, task: { ref: string; status: "COMPLETED" | "FAILED"; output: Record<string, unknown> }) {
    const { id } = await database.db
      .insertInto("WorkflowExecutions")
      .values({ namespaceId, defName: "routed-order", defVersion: 1, status: "COMPLETED", startedAt })
      .returning("id")
      .executeTakeFirstOrThrow();
    await database.db
      .insertInto("TaskExecutions")
      .values({ workflowId: id, namespaceId, refName: task.ref, taskType: "SIMPLE", taskDefName: "lookup_customer", queueName: "lookup_customer", status: task.status, output: JSON.stringify(task.output), scheduledAt: startedAt, endedAt: startedAt })
      .execute();
    return id;
  }

  it("returns the stored output of the newest run that completed the node, and nothing from another namespace", async () => {
    const ns = async (name: string) => (await database.db.insertInto("Namespaces").values({ name }).onConflict((oc) => oc.column("name").doUpdateSet({ name })).returning("id").executeTakeFirstOrThrow()).id;
    const defaultId = await ns("default");
    const otherId = await ns("pin-other");
    const older = await insertRun(defaultId, new Date("2026-01-01T00:00:00Z"), { ref: "lookup", status: "COMPLETED", output: { name: "Old", orders: 1 } });
    const latest = await insertRun(defaultId, new Date("2026-01-02T00:00:00Z"), { ref: "lookup", status: "COMPLETED", output: { name: "Ada", orders: 5 } });
    // Newer, but the node failed there: it did not complete it.
    await insertRun(defaultId, new Date("2026-01-03T00:00:00Z"), { ref: "lookup", status: "FAILED", output: { error: "boom" } });
    // Newest of all, same workflow name and ref, in another namespace.
    await insertRun(otherId, new Date("2026-01-04T00:00:00Z"), { ref: "lookup", status: "COMPLETED", output: { name: "Other namespace" } });
    expect(older).not.toBe(latest);

    const found = await caller().stepTests.lastRunOutput({ namespace: "default", workflow: "routed-order", ref: "lookup" });
    expect(found).toEqual({ runId: latest, runStartedAt: "2026-01-02T00:00:00.000Z", iteration: 0, output: { name: "Ada", orders: 5 } });
    expect(await caller().stepTests.lastRunOutput({ namespace: "default", workflow: "routed-order", ref: "score" })).toBeNull();
    expect(await caller().stepTests.lastRunOutput({ namespace: "default", workflow: "another-workflow", ref: "lookup" })).toBeNull();
  });
});
