import { expect, test } from "@playwright/test";
import type { Page } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient, createWorker } from "../sdk";
import type { NodeFlowClient, NodeFlowWorker } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * Runs watched the way a person watches them: the run page shows a worker's
 * task in progress and then completed without a reload, catches up after its
 * stream is cut, retries a failed run from the page, and the list finds runs
 * by their input. The worker is the SDK over real HTTP with an API key.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
let client: NodeFlowClient;
let apiKey: string;
const workers: NodeFlowWorker[] = [];
const suffix = uniqueSuffix();
const slowQueue = `e2e_slow_${suffix}`;
const flakyQueue = `e2e_flaky_${suffix}`;
/** The slow worker holds each task until the test lets it go. */
let release: (() => void) | null = null;
let flakyCalls = 0;

const node = (page: Page, ref: string) => page.locator(`.react-flow__node[data-id="${ref}"]`);
/** The element of a node that carries its run status. */
const runState = (page: Page, ref: string) => node(page, ref).locator("[data-run-status]");

function oneTask(name: string, queue: string, extra: Record<string, unknown> = {}) {
  return {
    schemaVersion: 1,
    name,
    nodes: [
      { ref: "work", type: "SIMPLE", name: queue, position: { x: 0, y: 0 }, input: { customer: "${workflow.input.customer}" }, ...extra },
      { ref: "after", type: "NOOP", position: { x: 0, y: 140 } },
    ],
    edges: [{ source: "work", target: "after" }],
  };
}

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-${suffix}`, scopes: ["admin", "worker"], createdBy: null })).key;
  const baseUrl = readE2eState().baseUrl;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition(oneTask(`e2e-slow-${suffix}`, slowQueue));
  await client.registerDefinition(oneTask(`e2e-flaky-${suffix}`, flakyQueue, { policy: { retryCount: 0 } }));
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  workers.push(
    createWorker({
      baseUrl,
      apiKey,
      namespace: "default",
      queue: slowQueue,
      pollTimeoutMs: 1000,
      logger: quiet,
      handler: async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return { done: true };
      },
    }),
    createWorker({
      baseUrl,
      apiKey,
      namespace: "default",
      queue: flakyQueue,
      pollTimeoutMs: 1000,
      logger: quiet,
      handler: () => {
        flakyCalls++;
        if (flakyCalls === 1) throw new Error("the card was declined");
        return { charged: true };
      },
    }),
  );
});

test.afterAll(async () => {
  release?.();
  await Promise.all(workers.map((w) => w.stop({ timeoutMs: 2000 })));
  await db.destroy();
});

async function runStatus(id: string): Promise<string> {
  return (await db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status;
}

test("a worker's task shows in progress, then completed, live; a cut stream catches up", async ({ page, context }) => {
  const { id } = await client.startRun({ name: `e2e-slow-${suffix}`, input: { customer: "ada" } });
  await page.goto(`/executions/${id}`);
  await expect(page.getByTestId("stream-state")).toHaveText("● Live");
  await expect(runState(page, "work")).toHaveAttribute("data-run-status", "IN_PROGRESS", { timeout: 15_000 });
  await expect(page.getByTestId("run-status-chip")).toContainText("Running");

  // Cut the stream; the run finishes while the page is offline.
  await context.setOffline(true);
  await expect(page.getByTestId("stream-state")).not.toHaveText("● Live");
  expect(release).not.toBeNull();
  release!();
  await expect.poll(() => runStatus(id), { timeout: 15_000 }).toBe("COMPLETED");
  await context.setOffline(false);

  // Back online: EventSource resumes from the last event it had, and the page catches up.
  await expect(page.getByTestId("stream-state")).toHaveText("● Live", { timeout: 15_000 });
  await expect(runState(page, "work")).toHaveAttribute("data-run-status", "COMPLETED");
  await expect(runState(page, "after")).toHaveAttribute("data-run-status", "COMPLETED");
  await expect(page.getByTestId("run-status-chip")).toContainText("Completed");

  // Nothing missing, nothing twice: the History tab holds the run's events in order.
  await page.getByRole("tab", { name: "History" }).click();
  const stored = await db.selectFrom("WorkflowEvents").select(["seq", "type"]).where("workflowId", "=", id).orderBy("seq").execute();
  const items = page.getByRole("list", { name: "History" }).getByRole("listitem");
  await expect(items).toHaveCount(stored.length);
  await expect(items.last()).toContainText(stored.at(-1)!.type);

  // The task panel: attempts, worker, timings.
  await node(page, "work").click();
  const panel = page.getByTestId("task-panel");
  await expect(panel).toContainText("work");
  await expect(panel.getByRole("list", { name: "Attempts" }).getByRole("listitem")).toHaveCount(1);
});

/**
 * Which of red and green dominates where the far-zoom overview paints a canvas point: below zoom 0.3 the
 * nodes are painted on one canvas, not in the DOM, so their status is only in the colour a person sees.
 */
async function paintedHue(page: Page, point: { x: number; y: number }): Promise<"red" | "green" | "neither"> {
  return page.getByTestId("diagram-overview").evaluate((canvas: HTMLCanvasElement, p) => {
    const m = new DOMMatrixReadOnly(getComputedStyle(document.querySelector(".react-flow__viewport")!).transform);
    const scale = canvas.width / canvas.clientWidth;
    const [r = 0, g = 0] = canvas.getContext("2d")!.getImageData((m.e + p.x * m.a) * scale, (m.f + p.y * m.a) * scale, 1, 1).data;
    return r > g + 40 ? "red" : g > r + 40 ? "green" : "neither";
  }, point);
}

test("a failed run is retried from the page and completes", async ({ page }) => {
  const { id } = await client.startRun({ name: `e2e-flaky-${suffix}`, input: { customer: "bob" } });
  await expect.poll(() => runStatus(id), { timeout: 15_000 }).toBe("FAILED");
  await page.goto(`/executions/${id}`);
  await expect(runState(page, "work")).toHaveAttribute("data-run-status", "FAILED");
  await expect(page.getByRole("note")).toContainText("declined");

  // Zoomed far out, the overview paints the failed task red, and green once the retry completes: live there too.
  const overview = page.getByTestId("diagram-overview");
  for (let i = 0; i < 20 && !(await overview.isVisible()); i++) await page.getByRole("button", { name: "Zoom Out", exact: true }).click();
  const work = { x: 110, y: 32 };
  await expect.poll(() => paintedHue(page, work)).toBe("red");

  await page.getByRole("button", { name: "Retry" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Retry" }).click();
  await expect(page.getByTestId("run-status-chip")).toContainText("Completed", { timeout: 15_000 });
  await expect.poll(() => paintedHue(page, work)).toBe("green");
  await page.getByRole("button", { name: "Fit View", exact: true }).click();
  await expect(runState(page, "work")).toHaveAttribute("data-run-status", "COMPLETED");
  expect(await runStatus(id)).toBe("COMPLETED");
  // The retry is a second attempt, and the history says so.
  await node(page, "work").click();
  await expect(page.getByTestId("task-panel").getByRole("list", { name: "Attempts" }).getByRole("listitem")).toHaveCount(2);
  const types = (await db.selectFrom("WorkflowEvents").select("type").where("workflowId", "=", id).execute()).map((e) => e.type);
  expect(types).toContain("WORKFLOW_RETRIED");
});

test("search by input.x:y lists exactly the matching runs, and a bad term says why", async ({ page }) => {
  const customer = `cust-${suffix}`;
  const matching: string[] = [];
  for (const who of [customer, "someone-else", customer]) {
    const { id } = await client.startRun({ name: `e2e-flaky-${suffix}`, input: { customer: who } });
    if (who === customer) matching.push(id);
  }
  await page.goto("/executions");
  await page.getByRole("textbox", { name: "Search" }).fill(`input.customer:${customer}`);
  await page.getByRole("button", { name: "Apply" }).click();
  const rows = page.getByRole("table", { name: "Runs" }).locator("tbody tr");
  await expect(rows).toHaveCount(2);
  const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")));
  expect(ids.sort()).toEqual([...matching].sort());

  await page.getByRole("textbox", { name: "Search" }).fill("input.:nothing");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "could not be listed" })).toContainText("input.");
});

test("a run of another namespace, or none at all, is the 404 page", async ({ page }) => {
  const response = await page.goto("/executions/00000000-0000-7000-8000-000000000000");
  expect(response?.status()).toBe(404);
});
