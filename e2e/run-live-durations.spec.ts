import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient, createWorker } from "../sdk";
import type { NodeFlowClient, NodeFlowWorker } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * A task's badge on the live run page says what the stored row says: a new
 * user watched a failure stream in as "failed · 0 ms" and read "failed · 16 ms"
 * after a reload, because the live view took the event's time for the task's.
 * The worker is the SDK over real HTTP; the test holds its task until the page
 * is watching, so the failure arrives over the stream.
 */

let db: Db;
let client: NodeFlowClient;
let worker: NodeFlowWorker | undefined;
let release: (() => void) | null = null;
const suffix = uniqueSuffix();
const queue = `e2e_badge_${suffix}`;
const name = `e2e-badge-${suffix}`;

/** How a node's badge writes a duration (components/editor/nodes/workflow-nodes.tsx). */
function badgeDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-${suffix}`, scopes: ["admin", "worker"], createdBy: null })).key;
  const baseUrl = readE2eState().baseUrl;
  client = createNodeFlowClient({ baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name,
    nodes: [{ ref: "charge", type: "SIMPLE", name: queue, position: { x: 0, y: 0 }, policy: { retryCount: 0 } }],
    edges: [],
  });
  worker = createWorker({
    baseUrl,
    apiKey,
    namespace: "default",
    queue,
    pollTimeoutMs: 1000,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    handler: async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      // Some time between the lease and the failure, so a badge that ignored the task's start would read 0 ms.
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error("the card was declined");
    },
  });
});

test.afterAll(async () => {
  release?.();
  await worker?.stop({ timeoutMs: 2000 });
  await db.destroy();
});

test("a failure streamed in shows the same duration as the page reloaded", async ({ page }) => {
  const { id } = await client.startRun({ name, input: {} });
  await page.goto(`/executions/${id}`);
  await expect(page.getByTestId("stream-state")).toHaveText("● Live");
  const charge = page.locator('.react-flow__node[data-id="charge"]');
  await expect(charge.locator("[data-run-status]")).toHaveAttribute("data-run-status", "IN_PROGRESS", { timeout: 15_000 });

  release!();
  await expect(charge.locator("[data-run-status]")).toHaveAttribute("data-run-status", "FAILED", { timeout: 15_000 });
  const badge = charge.getByTestId("run-status");
  await expect(badge).toHaveText(/^failed\s*· /);
  const live = (await badge.textContent())!;
  expect(live).not.toMatch(/· 0 ms$/);

  await page.reload();
  await expect(charge.locator("[data-run-status]")).toHaveAttribute("data-run-status", "FAILED");
  await expect(charge.getByTestId("run-status")).toHaveText(live);
  // And both are the stored row's own times.
  const row = await db.selectFrom("TaskExecutions").select(["startedAt", "endedAt"]).where("workflowId", "=", id).where("refName", "=", "charge").executeTakeFirstOrThrow();
  expect(live).toContain(`· ${badgeDuration(row.endedAt!.getTime() - row.startedAt!.getTime())}`);
});
