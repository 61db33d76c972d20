import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/db/testing/test-database";
import type { WorkflowDefinition } from "@/engine";
import type { Principal } from "../../auth/principal";
import { callerAs, insertTestUser, userPrincipal } from "../testing";

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
