import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import type { Locator, Page } from "@playwright/test";
import type { Db } from "../db/pool";
import type { WorkflowDefinition } from "../engine";
import { saveAiProvider } from "../server/ai/ai-providers";
import { FilesystemBlobStore } from "../server/lib/blob-store";
import { leaseTasks } from "../server/store/task-queues";
import { reportTaskResult } from "../server/tasks/report-task-result";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * An agent built in the editor and run: an in-test OpenAI-compatible server
 * on loopback scripts a tool call and then an answer, the sidecar runs the
 * model calls, the test plays the worker of the agent's tool, and the run
 * page lists the agent's turns.
 */

let db: Db;
let server: http.Server;
let baseUrl: string;
let blobRoot: string;
const answers: unknown[] = [];
const requests: Record<string, unknown>[] = [];

test.beforeAll(async () => {
  db = openE2eDb();
  blobRoot = await mkdtemp(path.join(tmpdir(), "nf-e2e-agent-"));
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      requests.push(JSON.parse(text || "{}") as Record<string, unknown>);
      const answer = answers.shift();
      res.writeHead(answer === undefined ? 500 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer ?? { error: { message: "no scripted answer left" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
test.afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(blobRoot, { recursive: true, force: true });
  await db.destroy();
});

const node = (page: Page, ref: string): Locator => page.locator(`.react-flow__node[data-id="${ref}"]`);

test("build an agent with a tool in the editor, run it, and see its turns on the run", async ({ page }) => {
  const suffix = uniqueSuffix();
  const name = `e2e-agent-${suffix}`;
  const provider = `e2e-llm-${suffix}`;
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const saved = await saveAiProvider(db, {
    namespaceId: ns.id,
    name: provider,
    config: { kind: "openai", baseUrl, models: ["gpt-e2e"], allowPrivateNetwork: true },
    actor: { type: "system", id: "e2e" },
    updatedBy: "e2e",
  });
  expect(saved.ok).toBe(true);
  answers.push(
    { choices: [{ message: { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"id":"u1"}' } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 } },
    { choices: [{ message: { role: "assistant", content: "u1 is Ada." }, finish_reason: "stop" }], usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } },
  );

  await page.goto("/workflows/new");
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
  const inspector = page.getByRole("complementary", { name: "Inspector" });
  await inspector.getByRole("textbox", { name: /^Name/ }).fill(name);
  await inspector.getByRole("textbox", { name: /^Name/ }).blur();

  // The agent is in the palette's AI group.
  const palette = page.getByRole("navigation", { name: "Node palette" });
  await expect(palette.getByRole("region", { name: "AI" }).getByRole("button", { name: "Add Agent" })).toBeVisible();
  await page.getByRole("button", { name: "Add Agent" }).dragTo(page.locator(".react-flow__pane"), { targetPosition: { x: 300, y: 150 } });
  await expect(node(page, "agent")).toBeVisible();
  await node(page, "agent").click();

  // Provider and model from the configured integrations.
  await inspector.getByRole("button", { name: /Configured provider/ }).click();
  await page.getByRole("option", { name: provider }).click();
  await expect(inspector.getByRole("button", { name: /Configured model/ })).toContainText("gpt-e2e");

  // One tool: a worker task.
  await inspector.getByRole("button", { name: "Add tool" }).click();
  const tool = inspector.getByRole("group", { name: "Tool 1" });
  await tool.getByRole("button", { name: /Kind/ }).click();
  await page.getByRole("option", { name: "Worker task" }).click();
  await tool.getByRole("textbox", { name: "Name", exact: true }).fill("lookup");
  await tool.getByRole("textbox", { name: "Description", exact: true }).fill("A user by id");
  await tool.getByRole("textbox", { name: "Task type", exact: true }).fill("user_lookup");

  await page.getByRole("button", { name: "Save", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Save a new version" });
  await dialog.getByRole("button", { name: "Save version" }).click();
  await expect(dialog).toBeHidden();
  const stored = await db.selectFrom("WorkflowDefinitions").select("graph").where("name", "=", name).executeTakeFirstOrThrow();
  const agent = (stored.graph as WorkflowDefinition).nodes[0]!;
  expect(agent).toMatchObject({
    type: "AGENT",
    agent: { llmProvider: provider, model: "gpt-e2e", tools: [{ name: "lookup", type: "SIMPLE", description: "A user by id", taskName: "user_lookup" }] },
  });

  await page.getByRole("button", { name: "Run", exact: true }).click();
  const run = page.getByRole("dialog", { name: "Run workflow" });
  await run.getByRole("textbox", { name: "Input JSON" }).click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"question": "Who is u1?"}');
  await run.getByRole("button", { name: "Start run" }).click();
  await expect(page).toHaveURL(/\/executions\/[0-9a-f-]{36}$/);
  const id = page.url().split("/").pop()!;

  // The model asked for the tool: play its worker.
  const blobs = new FilesystemBlobStore({ root: blobRoot });
  let taskId: string | undefined;
  await expect
    .poll(
      async () => {
        const [leased] = await leaseTasks(db, { queueName: "user_lookup", namespaceId: ns.id, count: 1, leaseSeconds: 30, owner: "e2e" });
        taskId ??= leased?.task.id;
        return taskId !== undefined;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  const report = await reportTaskResult({ db, blobs }, { namespaceId: ns.id, workflowId: id, taskId: taskId!, status: "COMPLETED", output: { name: "Ada" }, reason: null, workerId: "e2e" });
  expect(report.ok).toBe(true);

  await expect(page.getByTestId("run-status-chip")).toContainText("Completed", { timeout: 15_000 });
  await expect(node(page, "agent").getByTestId("run-status")).toContainText("turn 2");
  await node(page, "agent").click();
  const turns = page.getByTestId("task-panel").getByRole("list", { name: "Agent turns" });
  await expect(turns.getByRole("listitem").filter({ hasText: /^Turn/ })).toHaveCount(2);
  await expect(turns).toContainText("Turn 1");
  await expect(turns).toContainText("1 tool call");
  const output = await db.selectFrom("WorkflowExecutions").select(["status", "output"]).where("id", "=", id).executeTakeFirstOrThrow();
  expect(output).toMatchObject({ status: "COMPLETED", output: { result: "u1 is Ada.", turns: 2 } });
  expect(requests).toHaveLength(2);
});
