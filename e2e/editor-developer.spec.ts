import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import type { Locator, Page } from "@playwright/test";
import type { Db } from "../db/pool";
import type { WorkflowDefinition } from "../engine";
import { saveAiProvider } from "../server/ai/ai-providers";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * The editor's developer surface — sticky notes, templates, test a step and
 * pinned outputs — used through the browser, with the database's rows as the
 * proof of what was saved.
 */

let db: Db;
/** An OpenAI-compatible model on loopback, for the completion's step test: it answers every chat and records it. */
let model: http.Server;
let modelUrl: string;
const modelRequests: Record<string, unknown>[] = [];
test.beforeAll(async () => {
  db = openE2eDb();
  model = http.createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      modelRequests.push(JSON.parse(text || "{}") as Record<string, unknown>);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "Hello, Ada." }, finish_reason: "stop" }], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }));
    });
  });
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
});
test.afterAll(async () => {
  model.closeAllConnections();
  await new Promise((resolve) => model.close(resolve));
  await db.destroy();
});

const node = (page: Page, ref: string): Locator => page.locator(`.react-flow__node[data-id="${ref}"]`);
const inspector = (page: Page): Locator => page.getByRole("complementary", { name: "Inspector" });

async function storedGraph(name: string): Promise<WorkflowDefinition | undefined> {
  const row = await db.selectFrom("WorkflowDefinitions").select("graph").where("name", "=", name).orderBy("version", "desc").executeTakeFirst();
  return row?.graph as WorkflowDefinition | undefined;
}

async function rename(page: Page, name: string) {
  await page.locator(".react-flow__pane").click({ position: { x: 20, y: 20 } });
  const field = inspector(page).getByRole("textbox", { name: /^Name/ });
  await field.fill(name);
  await field.blur();
}

async function save(page: Page) {
  await page.getByRole("button", { name: "Save", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Save a new version" });
  await dialog.getByRole("button", { name: "Save version" }).click();
  await expect(dialog).toBeHidden();
}

async function typeInto(page: Page, field: Locator, text: string) {
  await field.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(text);
}

async function fromTemplate(page: Page, title: string) {
  await page.goto("/workflows");
  await page.getByRole("button", { name: "New from template" }).first().click();
  await page.getByRole("dialog", { name: "New from template" }).getByRole("link", { name: `Use template ${title}` }).click();
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
}

test("a sticky note is written in markdown, coloured, saved with the definition and there after a reload", async ({ page }) => {
  const name = `e2e-notes-${uniqueSuffix()}`;
  await page.goto("/workflows/new");
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
  await rename(page, name);
  await page.getByRole("button", { name: "Add No-op" }).click();
  await expect(node(page, "noop")).toBeVisible();

  await page.getByRole("button", { name: "Add note" }).click();
  const note = page.getByTestId("sticky-note");
  await expect(note).toBeVisible();
  await note.dblclick();
  await page.getByRole("textbox", { name: "Note text" }).fill("# Ship it\nCharge **after** the check <b>raw</b>");
  await page.getByRole("textbox", { name: "Note text" }).blur();
  await expect(note.getByRole("heading", { name: "Ship it" })).toBeVisible();
  await expect(note.locator("strong")).toHaveText("after");
  // Markdown is rendered as elements, never as HTML: the tag stays text.
  await expect(note.locator("b")).toHaveCount(0);
  await expect(note).toContainText("<b>raw</b>");

  await note.click();
  await page.getByRole("button", { name: "Colour blue" }).click();
  await expect(note).toHaveAttribute("data-note-color", "blue");

  // Resized by its corner handle: 120 × 80 screen pixels more, in the canvas's units at its zoom.
  const before = (await note.boundingBox())!;
  const zoom = before.width / 240;
  const corner = (await page.locator(".react-flow__resize-control.handle.bottom.right").boundingBox())!;
  await page.mouse.move(corner.x + corner.width / 2, corner.y + corner.height / 2);
  await page.mouse.down();
  await page.mouse.move(corner.x + corner.width / 2 + 120, corner.y + corner.height / 2 + 80, { steps: 10 });
  await page.mouse.up();
  const after = (await note.boundingBox())!;
  expect(after.width - before.width).toBeCloseTo(120, -1);
  expect(after.height - before.height).toBeCloseTo(80, -1);

  await save(page);
  await expect(page).toHaveURL(new RegExp(`/workflows/${name}$`));
  await page.reload();
  const reloaded = page.getByTestId("sticky-note");
  await expect(reloaded.getByRole("heading", { name: "Ship it" })).toBeVisible();
  await expect(reloaded).toHaveAttribute("data-note-color", "blue");

  const graph = await storedGraph(name);
  expect(graph?.notes).toHaveLength(1);
  const [saved] = graph!.notes!;
  expect(saved).toMatchObject({ id: "note_1", text: "# Ship it\nCharge **after** the check <b>raw</b>", color: "blue" });
  expect(saved!.width).toBeCloseTo(240 + 120 / zoom, -1);
  expect(saved!.height).toBeCloseTo(160 + 80 / zoom, -1);
  // The engine ignores it: the blueprint a run executes has no note.
  const stored = await db.selectFrom("WorkflowDefinitions").select("blueprint").where("name", "=", name).executeTakeFirstOrThrow();
  expect(JSON.stringify(stored.blueprint)).not.toContain("Ship it");
});

test("a template opens as a new workflow, and an INLINE step of it is tested in the sandbox", async ({ page }) => {
  const name = `e2e-template-${uniqueSuffix()}`;
  await fromTemplate(page, "Webhook to human review");
  await expect(node(page, "score")).toBeVisible();
  await expect(node(page, "review")).toBeVisible();
  await expect(page.getByTestId("sticky-note")).toContainText("Webhook → review");

  await node(page, "score").click();
  const panel = page.getByTestId("step-test-panel");
  await typeInto(page, panel.getByRole("textbox", { name: "Sample workflow input" }), '{"submission": {"amount": 5000}}');
  await panel.getByRole("button", { name: "Test step" }).click();
  const result = panel.getByTestId("step-result");
  await expect(result).toContainText("completed");
  // No email (+50) and over 1,000 (+40): the script's own answer, computed by QuickJS on the server.
  await expect(result.getByRole("textbox", { name: "Step output" })).toContainText('"risk": 90');

  await rename(page, name);
  await save(page);
  const graph = await storedGraph(name);
  expect(graph?.nodes.map((n) => n.ref)).toEqual(["score", "needs_review", "review", "auto_accept", "done"]);
  expect(graph?.description).toContain("webhook");
});

test("a pinned output feeds the test of the step after it, is marked on the diagram and saved, and runs never see it", async ({ page }) => {
  const name = `e2e-pins-${uniqueSuffix()}`;
  await fromTemplate(page, "Retry with backoff");
  await node(page, "charge").click();
  const panel = page.getByTestId("step-test-panel");
  await panel.getByRole("button", { name: "Pin an output by hand" }).click();
  await typeInto(page, panel.getByRole("textbox", { name: "Pinned output JSON" }), '{"response": {"body": {"id": "ch_42"}}}');
  await expect(node(page, "charge")).toHaveClass(/node-pinned/);

  await node(page, "fulfil").click();
  await typeInto(page, panel.getByRole("textbox", { name: "Sample workflow input" }), '{"orderId": "o-7"}');
  await typeInto(page, panel.getByRole("textbox", { name: "Mocked output" }), '{"shipped": true}');
  await panel.getByRole("button", { name: "Test step" }).click();
  const result = panel.getByTestId("step-result");
  await expect(result).toContainText("mocked output");
  await result.getByText("Input the task was given").click();
  await expect(result).toContainText('"chargeId": "ch_42"');
  await expect(result).toContainText('"orderId": "o-7"');

  await rename(page, name);
  await save(page);
  const stored = await db.selectFrom("WorkflowDefinitions").select(["graph", "blueprint"]).where("name", "=", name).executeTakeFirstOrThrow();
  expect((stored.graph as WorkflowDefinition).pins).toEqual({ charge: { response: { body: { id: "ch_42" } } } });
  // The blueprint a run executes carries no pin.
  expect(JSON.stringify(stored.blueprint)).not.toContain("ch_42");
});

test("a jq step is tested in the web process's jq sandbox, reading an upstream output pinned by hand", async ({ page }) => {
  await fromTemplate(page, "ETL with jq");
  await node(page, "extract").click();
  const panel = page.getByTestId("step-test-panel");
  await panel.getByRole("button", { name: "Pin an output by hand" }).click();
  const records = [
    { id: "r1", amount: 5, customer: { name: "Ada" } },
    { id: "r2", amount: 50, customer: { name: "Bo" } },
  ];
  await typeInto(page, panel.getByRole("textbox", { name: "Pinned output JSON" }), JSON.stringify({ response: { body: { records } } }));
  await expect(node(page, "extract")).toHaveClass(/node-pinned/);

  await node(page, "transform").click();
  await typeInto(page, panel.getByRole("textbox", { name: "Sample workflow input" }), '{"minAmount": 10}');
  await panel.getByRole("button", { name: "Test step" }).click();
  const result = panel.getByTestId("step-result");
  await expect(result).toContainText("completed");
  // Only r2 clears the minimum: jq's own answer, flattened the way the query asks.
  const output = result.getByRole("textbox", { name: "Step output" });
  await expect(output).toContainText('"customer": "Bo"');
  await expect(output).not.toContainText("Ada");
});

test("a chat completion's messages are edited as a list with completion, and the step is tested against the provider", async ({ page }) => {
  const provider = `e2e-chat-${uniqueSuffix()}`;
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const saved = await saveAiProvider(db, {
    namespaceId: ns.id,
    name: provider,
    config: { kind: "openai", baseUrl: modelUrl, models: ["gpt-e2e"], allowPrivateNetwork: true },
    actor: { type: "system", id: "e2e" },
    updatedBy: "e2e",
  });
  expect(saved.ok).toBe(true);

  await page.goto("/workflows/new");
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
  await page.getByRole("button", { name: "Add Chat completion" }).dragTo(page.locator(".react-flow__pane"), { targetPosition: { x: 300, y: 150 } });
  await node(page, "llm_chat_complete").click();
  const form = inspector(page);
  await form.getByRole("button", { name: /Configured provider/ }).click();
  await page.getByRole("option", { name: provider }).click();
  await expect(form.getByRole("button", { name: /Configured model/ })).toContainText("gpt-e2e");

  // The new node's one message, rewritten; the completion popup offers the workflow's input.
  const messages = form.getByRole("group", { name: "Messages" });
  const first = messages.getByRole("textbox", { name: "Message 1 text" });
  await typeInto(page, first, "Greet ");
  await page.keyboard.type("${workflow.in");
  await expect(page.locator(".cm-tooltip-autocomplete")).toContainText("${workflow.input}");
  await typeInto(page, first, "Greet ${workflow.input.name}.");
  // A second message, made the system prompt and moved first.
  await messages.getByRole("button", { name: "Add message" }).click();
  await typeInto(page, messages.getByRole("textbox", { name: "Message 2 text" }), "Be brief.");
  await messages.getByRole("button", { name: /Message 2 role/ }).click();
  await page.getByRole("option", { name: "system" }).click();
  await messages.getByRole("button", { name: "Move message 2 up" }).click();
  await expect(messages.getByRole("textbox", { name: "Message 1 text" })).toContainText("Be brief.");

  const panel = page.getByTestId("step-test-panel");
  await typeInto(page, panel.getByRole("textbox", { name: "Sample workflow input" }), '{"name": "Ada"}');
  modelRequests.length = 0;
  await panel.getByRole("button", { name: "Test step" }).click();
  const result = panel.getByTestId("step-result");
  await expect(result).toContainText("completed");
  await expect(result.getByLabel("Model answer")).toHaveText("Hello, Ada.");
  await expect(result.getByTestId("step-metrics")).toContainText("15 tokens (12 in, 3 out)");
  expect(modelRequests).toHaveLength(1);
  expect(modelRequests[0]).toMatchObject({
    model: "gpt-e2e",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Greet Ada." },
    ],
  });
});

test("Test workflow runs the draft with a pin standing in for a human, shows each node's status and the output, and stores nothing", async ({ page }) => {
  const name = `e2e-test-run-${uniqueSuffix()}`;
  await fromTemplate(page, "Webhook to human review");
  await rename(page, name);
  await node(page, "review").click();
  const panel = page.getByTestId("step-test-panel");
  await panel.getByRole("button", { name: "Pin an output by hand" }).click();
  await typeInto(page, panel.getByRole("textbox", { name: "Pinned output JSON" }), '{"outcome": "reject"}');
  await expect(node(page, "review")).toHaveClass(/node-pinned/);

  await page.getByRole("button", { name: "Test workflow" }).click();
  const dialog = page.getByRole("dialog", { name: "Test workflow" });
  await typeInto(page, dialog.getByRole("textbox", { name: "Test input JSON" }), '{"submission": {"amount": 5000}}');
  await dialog.getByRole("button", { name: "Test workflow" }).click();
  await expect(dialog).toBeHidden();

  // The run overlay's badges on the canvas: the script ran, the SWITCH chose review, the pin answered for the person.
  const status = (ref: string) => node(page, ref).locator("[data-run-status]");
  await expect(status("score")).toHaveAttribute("data-run-status", "COMPLETED");
  await expect(status("needs_review")).toHaveAttribute("data-run-status", "COMPLETED");
  await expect(status("review")).toHaveAttribute("data-run-status", "COMPLETED");
  await expect(node(page, "review").getByTestId("run-status")).toHaveText(/completed\s*· pinned/);
  await expect(status("auto_accept")).toHaveAttribute("data-run-status", "SKIPPED");
  await expect(status("done")).toHaveAttribute("data-run-status", "COMPLETED");

  const result = page.getByTestId("workflow-test-panel");
  await expect(result.getByTestId("workflow-test-status")).toHaveText("completed");
  await expect(result.getByTestId("workflow-test-step")).toHaveCount(4);
  await expect(result.locator('[data-ref="review"]')).toContainText("pinned");
  await expect(result.locator('[data-ref="score"]')).toContainText('"risk": 90');
  await expect(result.getByTestId("workflow-test-output")).toContainText('"outcome": "reject"');
  await expect(result.getByTestId("workflow-test-output")).toContainText('"reviewed": true');

  await result.getByRole("button", { name: "Clear test run" }).click();
  await expect(result).toBeHidden();
  await expect(node(page, "score").locator("[data-run-status]")).toHaveCount(0);
  // A test is no run: nothing of it was stored.
  const runs = await db.selectFrom("WorkflowExecutions").select("id").where("defName", "=", name).execute();
  expect(runs).toEqual([]);
});
