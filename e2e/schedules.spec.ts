import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * A schedule set up as a person would, in the workflow's Triggers drawer: a
 * bad expression is refused by the live preview before anything is saved,
 * a good one previews its next fire times, the saved schedule lists its next
 * five, the real sidecar fires it, its last fires link to the runs, and a
 * run's page says which schedule started it.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
const suffix = uniqueSuffix();
const workflow = `e2e-scheduled-${suffix}`;
const schedule = `every-second-${suffix}`.replace(/[^A-Za-z0-9_-]/g, "-");

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-schedules-${suffix}`, scopes: ["admin"], createdBy: null })).key;
  const client = createNodeFlowClient({ baseUrl: readE2eState().baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name: workflow,
    nodes: [{ ref: "stamp", type: "INLINE", evaluatorType: "javascript", expression: "$.at", input: { at: "${workflow.input.at}" }, position: { x: 0, y: 0 } }],
    edges: [],
  });
});

test.afterAll(async () => {
  // Never leave an every-second schedule firing into the other specs' database.
  await db.deleteFrom("Schedules").where("name", "=", schedule).execute();
  await db.destroy();
});

test("a schedule created in the Triggers drawer shows its next fire times and the runs it starts", async ({ page }) => {
  await page.goto(`/workflows/${workflow}`);
  await page.getByRole("button", { name: "Triggers" }).click();
  const drawer = page.getByRole("dialog", { name: "Triggers" });
  await drawer.getByRole("button", { name: "Add schedule" }).click();
  const form = drawer.getByRole("form", { name: "New schedule" });
  await form.getByRole("textbox", { name: "Name" }).fill(schedule);
  const preview = form.getByTestId("schedule-preview");

  // The preview is the server's reading of the expression, as it is typed.
  await form.getByRole("textbox", { name: "Cron expression" }).fill("61 * * * *");
  await expect(preview).toContainText("Invalid value for minute");
  await form.getByRole("textbox", { name: "Time zone" }).fill("Europe/Berlin");
  await form.getByRole("textbox", { name: "Cron expression" }).fill("30 2 * * *");
  await expect(preview.getByRole("listitem")).toHaveCount(5);
  await expect(preview).toContainText("Daylight saving time");
  await expect(preview).toContainText("clocks in Europe/Berlin go");

  await form.getByRole("textbox", { name: "Cron expression" }).fill("* * * * * *");
  await form.getByRole("textbox", { name: "Run input" }).fill('{ "at": "${schedule.fireTime}" }');
  await expect(preview.getByRole("listitem")).toHaveCount(5);
  await form.getByRole("button", { name: "Create schedule" }).click();

  const item = drawer.getByTestId(`schedule-${schedule}`);
  await expect(item).toContainText("* * * * * *");
  await expect(item.getByRole("list", { name: `Next fires of ${schedule}` }).getByRole("listitem")).toHaveCount(5);
  // On the diagram, the start names what starts it; the chip opens the drawer again.
  await page.keyboard.press("Escape");
  await expect(drawer).toHaveCount(0);
  await expect(page.getByTestId("start-triggers")).toContainText(schedule);
  await page.getByTestId("start-triggers").click();
  await expect(item).toBeVisible();
  const stored = await db.selectFrom("Schedules").select(["cronExpression", "zoneId", "paused"]).where("name", "=", schedule).executeTakeFirstOrThrow();
  expect(stored).toEqual({ cronExpression: "* * * * * *", zoneId: "Europe/Berlin", paused: false });

  // The sidecar fires it; the drawer refreshes its last fires with links to the runs.
  const lastFires = item.getByRole("list", { name: `Last fires of ${schedule}` });
  await expect(lastFires.getByRole("link").first()).toBeVisible({ timeout: 20_000 });
  await item.getByRole("button", { name: "Pause" }).click();
  await expect(item).toContainText("paused");
  await expect(item).toContainText("None while paused.");

  await lastFires.getByRole("link").first().click();
  await expect(page.getByTestId("run-started-by")).toContainText(`schedule ${schedule}`);
  const runs = await db.selectFrom("WorkflowExecutions").select("createdBy").where("defName", "=", workflow).execute();
  expect(runs.length).toBeGreaterThan(0);
  expect(runs.every((r) => r.createdBy === `schedule:${schedule}`)).toBe(true);
});

test("a schedule is deleted after a confirmation", async ({ page }) => {
  await page.goto(`/workflows/${workflow}`);
  await page.getByRole("button", { name: "Triggers" }).click();
  const drawer = page.getByRole("dialog", { name: "Triggers" });
  const item = drawer.getByTestId(`schedule-${schedule}`);
  await item.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Delete schedule" }).click();
  await expect(item).toHaveCount(0);
  expect(await db.selectFrom("Schedules").select("id").where("name", "=", schedule).execute()).toEqual([]);
});
