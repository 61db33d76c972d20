import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient } from "../sdk";
import type { NodeFlowClient } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * Settings → Event handlers as a person uses them: a handler added in the
 * console (refused first for a workflow that does not exist, naming the
 * action) starts a workflow when another workflow's EVENT task publishes; the
 * run it started carries the payload, and the handler's executions list the
 * event with a link to that run. A status listener is added and removed on
 * the same page.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
let client: NodeFlowClient;
const suffix = uniqueSuffix();
const emitter = `e2e-emitter-${suffix}`;
const shipper = `e2e-shipper-${suffix}`;
const handler = `ship-${suffix}`.replace(/[^A-Za-z0-9_.-]/g, "-");
const listener = `notify-${suffix}`.replace(/[^A-Za-z0-9_.-]/g, "-");
const event = `conductor:${emitter}:order_ready`;
const position = { x: 0, y: 0 };

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-events-${suffix}`, scopes: ["admin"], createdBy: null })).key;
  client = createNodeFlowClient({ baseUrl: readE2eState().baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name: emitter,
    nodes: [{ ref: "announce", type: "EVENT", sink: "conductor:order_ready", input: { orderId: "${workflow.input.orderId}", status: "${workflow.input.status}" }, position }],
    edges: [],
  });
  await client.registerDefinition({
    schemaVersion: 1,
    name: shipper,
    nodes: [{ ref: "label", type: "INLINE", evaluatorType: "javascript", expression: "'ship ' + $.orderId", input: { orderId: "${workflow.input.orderId}" }, position }],
    edges: [],
  });
});

test.afterAll(async () => {
  await db.destroy();
});

test("an event handler added in Settings starts a workflow on an event and lists what it did", async ({ page }) => {
  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Event handlers" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Event handlers" })).toBeVisible();
  await page.getByRole("button", { name: "Add event handler" }).first().click();
  const form = page.getByRole("form", { name: "Add an event handler" });
  await form.getByRole("textbox", { name: "Name" }).fill(handler);
  await form.getByRole("textbox", { name: "Event" }).fill(event);
  await form.getByRole("textbox", { name: "Condition" }).fill("$.status == 'READY'");
  const actions = form.getByRole("textbox", { name: "Actions" });
  await actions.fill(JSON.stringify([{ action: "start_workflow", start_workflow: { name: `${shipper}-missing`, input: { orderId: "${orderId}" } } }]));
  await form.getByRole("button", { name: "Add event handler" }).click();
  // Refused next to the actions, naming the workflow; nothing written.
  await expect(form.getByText(`There is no workflow "${shipper}-missing"`)).toBeVisible();
  expect(await db.selectFrom("EventHandlers").select("id").where("name", "=", handler).execute()).toEqual([]);

  await actions.fill(JSON.stringify([{ action: "start_workflow", start_workflow: { name: shipper, input: { orderId: "${orderId}" } } }], null, 2));
  await form.getByRole("button", { name: "Add event handler" }).click();
  const grid = page.getByRole("grid", { name: "Event handlers" });
  const row = grid.getByRole("row").filter({ hasText: handler });
  await expect(row).toContainText(event);
  await expect(row).toContainText("Active");
  const stored = await db.selectFrom("EventHandlers").select(["event", "condition", "active", "actions"]).where("name", "=", handler).executeTakeFirstOrThrow();
  expect(stored).toMatchObject({ event, condition: "$.status == 'READY'", active: true, actions: [{ action: "start_workflow", start_workflow: { name: shipper } }] });

  // The event: an EVENT task publishes it; one that fails the condition is skipped.
  const skipped = await client.startRun({ name: emitter, input: { orderId: "o-0", status: "PENDING" } });
  const published = await client.startRun({ name: emitter, input: { orderId: "o-1", status: "READY" } });
  const started = async () => db.selectFrom("WorkflowExecutions").select(["id", "status", "input", "createdBy"]).where("defName", "=", shipper).execute();
  await expect.poll(async () => (await started()).length, { timeout: 20_000 }).toBe(1);
  const [run] = await started();
  expect(run).toMatchObject({ input: { orderId: "o-1" }, createdBy: `event-handler:${handler}` });
  await expect.poll(async () => (await db.selectFrom("WorkflowExecutions").select("status").where("id", "=", run!.id).executeTakeFirstOrThrow()).status, { timeout: 20_000 }).toBe("COMPLETED");
  await expect
    .poll(async () => (await db.selectFrom("EventExecutions as x").innerJoin("EventHandlers as h", "h.id", "x.handlerId").select("x.status").where("h.name", "=", handler).orderBy("x.status").execute()).map((x) => x.status), { timeout: 20_000 })
    .toEqual(["COMPLETED", "SKIPPED"]);
  expect(skipped.id).not.toBe(published.id);

  await row.getByRole("button", { name: `Executions of ${handler}` }).click();
  const executions = page.getByRole("grid", { name: `Executions of ${handler}` });
  await expect(executions.getByRole("row").filter({ hasText: "COMPLETED" })).toHaveCount(1);
  await expect(executions.getByRole("row").filter({ hasText: "SKIPPED" })).toContainText("The condition did not hold");
  await executions.getByRole("link", { name: run!.id }).click();
  await expect(page).toHaveURL(new RegExp(`/executions/${run!.id}$`));
  await expect(page.getByTestId("run-status-chip")).toContainText("Completed");
});

test("a status listener is added and deleted on the same page", async ({ page }) => {
  await page.goto("/settings/event-handlers");
  await page.getByRole("button", { name: "Add status listener" }).first().click();
  const form = page.getByRole("form", { name: "Add a status listener" });
  await form.getByRole("textbox", { name: "Name" }).fill(listener);
  await form.getByRole("textbox", { name: "URL" }).fill("ftp://hooks.example.com/x");
  await form.getByRole("textbox", { name: "Workflow" }).fill(shipper);
  // The checkbox's input is visually hidden behind its control: click its label.
  await form.getByText("TERMINATED", { exact: true }).click();
  await expect(form.getByRole("checkbox", { name: "TERMINATED" })).not.toBeChecked();
  await form.getByRole("button", { name: "Add status listener" }).click();
  await expect(form.getByText(/unsupported URL scheme "ftp"/)).toBeVisible();
  expect(await db.selectFrom("StatusListeners").select("id").where("name", "=", listener).execute()).toEqual([]);

  await form.getByRole("textbox", { name: "URL" }).fill("https://hooks.example.com/node-flow");
  await form.getByRole("button", { name: "Add status listener" }).click();
  const grid = page.getByRole("grid", { name: "Status listeners" });
  await expect(grid.getByRole("row").filter({ hasText: listener })).toContainText("https://hooks.example.com/node-flow");
  const stored = await db.selectFrom("StatusListeners").select(["url", "workflowName", "statuses", "enabled", "secretName"]).where("name", "=", listener).executeTakeFirstOrThrow();
  expect(stored).toEqual({ url: "https://hooks.example.com/node-flow", workflowName: shipper, statuses: ["COMPLETED", "FAILED", "TIMED_OUT"], enabled: true, secretName: null });

  await grid.getByRole("button", { name: `Delete ${listener}` }).click();
  await page.getByRole("button", { name: "Delete status listener" }).click();
  await expect(grid.getByRole("row").filter({ hasText: listener })).toHaveCount(0);
  expect(await db.selectFrom("StatusListeners").select("id").where("name", "=", listener).execute()).toEqual([]);
});
