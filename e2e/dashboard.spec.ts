import { expect, test } from "@playwright/test";
import type { Page } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient, createWorker } from "../sdk";
import type { NodeFlowClient, NodeFlowWorker } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { hashPassword } from "../server/auth/passwords";
import { upsertNamespaceMember } from "../server/store/namespace-members";
import { insertNamespace } from "../server/store/namespaces";
import { insertUser } from "../server/store/users";
import { readE2eState } from "./e2e-state";
import { SIGNED_OUT, openE2eDb, signInThroughUi, uniqueSuffix } from "./identity";

/**
 * The runs dashboard as a person reads it: a run whose worker task just
 * failed is counted in its workflow's numbers (runs, failure rate, queue
 * wait) and listed among the failing runs, whose link opens the run's page;
 * "All failed runs" opens the runs list filtered to them. A workflow with no
 * runs shows the empty state; a viewer reads the same on a phone-sized
 * screen; another namespace's failure of the same workflow name never counts.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
let client: NodeFlowClient;
let worker: NodeFlowWorker;
let runId: string;
const suffix = uniqueSuffix();
const workflow = `e2e-dash-${suffix}`;
const quietWorkflow = `e2e-dash-quiet-${suffix}`;
const queue = `e2e_dash_${suffix}`;
const viewer = { email: `vera.${suffix}@e2e.example`, password: "meadow copper 58 lantern" };

/** The dashboard's workflow picker, set as a person sets it. */
async function chooseWorkflow(page: Page, name: string): Promise<void> {
  await page.getByRole("button", { name: /Workflow/ }).click();
  await page.getByRole("option", { name, exact: true }).click();
}

const failingRuns = (page: Page) => page.getByRole("list", { name: "Failing runs" });

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-dash-${suffix}`, scopes: ["admin", "worker"], createdBy: null })).key;
  const baseUrl = readE2eState().baseUrl;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name: workflow,
    nodes: [{ ref: "charge", type: "SIMPLE", name: queue, input: { customer: "${workflow.input.customer}" }, policy: { retryCount: 0 }, position: { x: 0, y: 0 } }],
    edges: [],
  });
  await client.registerDefinition({ schemaVersion: 1, name: quietWorkflow, nodes: [{ ref: "noop", type: "NOOP", position: { x: 0, y: 0 } }], edges: [] });
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  worker = createWorker({
    baseUrl,
    apiKey,
    namespace: "default",
    queue,
    pollTimeoutMs: 1000,
    logger: quiet,
    handler: (task) => {
      throw new Error(`card declined for ${String((task.input as { customer?: unknown }).customer)}`);
    },
  });

  // The same workflow name failing in another namespace: if it leaked, the counts below would be 2.
  const other = await insertNamespace(db, { name: `e2e-dash-${suffix}` });
  const now = new Date();
  await db.insertInto("WorkflowExecutions").values({ namespaceId: other.id, defName: workflow, defVersion: 1, status: "FAILED", startedAt: now, endedAt: now }).execute();

  const user = await insertUser(db, { email: viewer.email, passwordHash: await hashPassword(viewer.password), isOwner: false });
  await upsertNamespaceMember(db, { namespaceId: ns.id, userId: user.id, role: "viewer" });
});

test.afterAll(async () => {
  await worker?.stop({ timeoutMs: 2000 });
  await db.destroy();
});

test("a run that just failed is counted and listed, and its link opens it", async ({ page }) => {
  ({ id: runId } = await client.startRun({ name: workflow, input: { customer: "ada" } }));
  await expect
    .poll(async () => (await db.selectFrom("WorkflowExecutions").select("status").where("id", "=", runId).executeTakeFirstOrThrow()).status, { timeout: 20_000 })
    .toBe("FAILED");
  // What the dashboard should be reading: one run of this workflow in the namespace, failed, one worker task that was leased.
  const runs = await db
    .selectFrom("WorkflowExecutions")
    .innerJoin("Namespaces", "Namespaces.id", "WorkflowExecutions.namespaceId")
    .select(["WorkflowExecutions.id", "WorkflowExecutions.status", "WorkflowExecutions.reasonForIncompletion", "WorkflowExecutions.failedTaskRef"])
    .where("Namespaces.name", "=", "default")
    .where("WorkflowExecutions.defName", "=", workflow)
    .execute();
  expect(runs).toHaveLength(1);
  const run = runs[0]!;
  expect(run).toMatchObject({ id: runId, status: "FAILED", failedTaskRef: "charge" });
  expect(run.reasonForIncompletion).toContain("card declined for ada");
  const task = await db.selectFrom("TaskExecutions").select(["queueName", "scheduledAt", "startedAt"]).where("workflowId", "=", runId).executeTakeFirstOrThrow();
  expect(task.queueName).toBe(queue);
  expect(task.startedAt).not.toBeNull();

  await page.goto("/dashboard");
  await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();
  await chooseWorkflow(page, workflow);
  await expect(page).toHaveURL(new RegExp(`/dashboard\\?workflow=${workflow}$`));

  await expect(page.getByRole("group", { name: "Runs started" }).getByText("1", { exact: true })).toBeVisible();
  await expect(page.getByRole("group", { name: "Failure rate" })).toContainText("100 %");
  await expect(page.getByRole("group", { name: "Failure rate" })).toContainText("1 failed or timed out");
  await expect(page.getByRole("group", { name: "Queue wait p50 / p95" })).toContainText("over 1 worker task");
  const link = failingRuns(page).getByRole("link");
  await expect(link).toHaveCount(1);
  await expect(link).toContainText(workflow);
  await expect(link).toContainText(run.reasonForIncompletion!);
  await expect(link).toHaveAttribute("href", `/executions/${runId}`);
  // The runs chart drew the failure as a bar, in the danger colour.
  await expect(page.getByRole("figure", { name: "Runs per minute, by status" }).locator(".recharts-bar-rectangle path").first()).toHaveAttribute("fill", "var(--danger)");
  // One bucket measured alone: the failure rate and duration lines mark it with a dot.
  await expect(page.getByRole("figure", { name: "Failure rate" }).locator("circle.lone-point")).toHaveAttribute("fill", "var(--danger)");
  await expect(page.getByRole("figure", { name: "Run duration" }).locator("circle.lone-point")).toHaveCount(2);
  await noHorizontalScroll(page);

  // The week counts it too, and the URL keeps the view across a reload.
  await page.getByRole("radio", { name: "Last week" }).or(page.getByRole("button", { name: "Last week" })).click();
  await expect(page).toHaveURL(new RegExp(`/dashboard\\?range=week&workflow=${workflow}$`));
  await page.reload();
  await expect(page.getByRole("button", { name: /Workflow/ })).toContainText(workflow);
  await expect(failingRuns(page).getByRole("link")).toHaveCount(1);
  await expect(page.getByRole("group", { name: "Runs started" }).getByText("1", { exact: true })).toBeVisible();

  await failingRuns(page).getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/executions/${runId}$`));
  await expect(page.getByTestId("run-status-chip")).toContainText("Failed");
});

test("All failed runs opens the runs list filtered to the workflow's failures", async ({ page }) => {
  await page.goto(`/dashboard?workflow=${workflow}`);
  await page.getByRole("link", { name: "All failed runs" }).click();
  await expect(page).toHaveURL(new RegExp(`/executions\\?status=FAILED&status=TIMED_OUT&workflow=${workflow}$`));
  const filters = page.getByRole("form", { name: "Filter runs" });
  await expect(filters.getByRole("button", { name: "Failed", exact: true })).toHaveAttribute("aria-pressed", "true");
  await expect(filters.getByRole("button", { name: "Completed", exact: true })).toHaveAttribute("aria-pressed", "false");
  await expect(filters.getByRole("textbox", { name: "Workflow" })).toHaveValue(workflow);
  const rows = page.getByRole("row").filter({ hasText: workflow });
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText("Failed");
  await rows.first().getByRole("link").first().click();
  await expect(page).toHaveURL(new RegExp(`/executions/${runId}$`));
});

test("a workflow with no runs shows the empty state", async ({ page }) => {
  await page.goto("/dashboard");
  await chooseWorkflow(page, quietWorkflow);
  await expect(page.getByText("No runs in the last hour")).toBeVisible();
  await expect(page.getByRole("list", { name: "Failing runs" })).toHaveCount(0);
  await expect(page.getByRole("figure")).toHaveCount(0);
});

test.describe("on a phone, as a viewer", () => {
  test.use({ storageState: SIGNED_OUT, viewport: { width: 390, height: 844 } });

  test("the dashboard fits the screen and still links to the failing run", async ({ page }) => {
    await signInThroughUi(page, viewer);
    await page.goto(`/dashboard?workflow=${workflow}`);
    await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();
    await expect(page.getByRole("group", { name: "Failure rate" })).toContainText("100 %");
    await expect(page.getByRole("figure", { name: "Runs per minute, by status" }).locator(".recharts-bar-rectangle").first()).toBeVisible();
    const figure = await page.getByRole("figure", { name: "Failure rate" }).boundingBox();
    expect(figure!.width).toBeLessThanOrEqual(390);
    await noHorizontalScroll(page);
    await failingRuns(page).getByRole("link").click();
    await expect(page).toHaveURL(new RegExp(`/executions/${runId}$`));
  });
});
