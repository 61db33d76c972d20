import { expect, test } from "@playwright/test";
import { sql } from "kysely";
import { json } from "../db/json";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { readE2eState } from "./e2e-state";

// Serial: the first test needs the database as the server left it, and the
// second changes it.
test.describe.configure({ mode: "serial" });

let db: Db;

test.beforeAll(() => {
  db = createDb(readE2eState().databaseUrl, { max: 2, applicationName: "node-flow-e2e" });
});

test.afterAll(async () => {
  await db.destroy();
});

test("with no definitions, Workflows shows the empty state", async ({ page }) => {
  // Specs before this one save workflows; deleting (archiving) them all is
  // what a user would do to get back to an empty list.
  await db.updateTable("WorkflowDefinitions").set({ archivedAt: sql<Date>`now()` }).where("archivedAt", "is", null).execute();

  await page.goto("/workflows");
  await expect(page.getByRole("heading", { name: "No workflows yet" })).toBeVisible();
  // An editor is offered both ways to make the first one.
  await expect(page.getByRole("link", { name: "New workflow" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Import" })).toBeVisible();
  await expect(page.getByRole("grid")).toHaveCount(0);
});

test("a definition written to the database is listed as the database has it", async ({ page }) => {
  const name = `e2e-order-fulfilment-${Date.now().toString(36)}`;
  const namespace = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const graph = json({ nodes: [], edges: [] });
  for (const [version, description] of [
    [1, "First draft"],
    [2, "Reserves stock, charges the card and books the courier"],
  ] as const) {
    await db
      .insertInto("WorkflowDefinitions")
      .values({ namespaceId: namespace.id, name, version, description, graph, blueprint: graph })
      .execute();
  }
  await db
    .insertInto("WorkflowDefinitions")
    .values({ namespaceId: namespace.id, name: `${name}-archived`, version: 1, description: "Hidden", graph, blueprint: graph, archivedAt: sql<Date>`now()` })
    .execute();

  // What the UI should show: the newest unarchived version, read straight from the table.
  const latest = await db
    .selectFrom("WorkflowDefinitions")
    .select(["version", "description"])
    .where("name", "=", name)
    .where("archivedAt", "is", null)
    .orderBy("version", "desc")
    .executeTakeFirstOrThrow();

  await page.goto("/workflows");
  const table = page.getByRole("grid", { name: "Workflow definitions" });
  await expect(table).toBeVisible();
  const row = table.getByRole("row").filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row.getByRole("rowheader")).toContainText(name);
  await expect(row.getByRole("rowheader")).toContainText(latest.description ?? "No description");
  await expect(row).toContainText(`v${latest.version}`);
  await expect(row).toContainText("of 2");
  await expect(row.locator("time:visible")).toHaveText("just now");
  await expect(table.getByRole("row").filter({ hasText: `${name}-archived` })).toHaveCount(0);

  // Search narrows the list through the same query.
  await page.getByRole("searchbox", { name: "Search workflows" }).fill("courier");
  await expect(table.getByRole("row").filter({ hasText: name })).toHaveCount(1);
  await page.getByRole("searchbox", { name: "Search workflows" }).fill("no-such-workflow-anywhere");
  await expect(page.getByText("No workflows match “no-such-workflow-anywhere”")).toBeVisible();
});
