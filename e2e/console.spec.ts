import { expect, test } from "@playwright/test";
import { SIGNED_OUT, openE2eDb } from "./identity";

// Every test here starts signed in as the owner (the storage state the setup
// project saved); the signed-out cases say so with SIGNED_OUT.

const SECTIONS = [
  { link: "Workflows", path: "/workflows" },
  { link: "Executions", path: "/executions" },
  { link: "Inbox", path: "/inbox" },
  { link: "Settings", path: "/settings" },
] as const;

test("/ lands on Workflows, and every section is one click away", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/workflows$/);
  await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();

  const nav = page.getByRole("navigation", { name: "Main" });
  for (const section of SECTIONS) await expect(nav.getByRole("link", { name: section.link })).toBeVisible();

  for (const section of SECTIONS) {
    await nav.getByRole("link", { name: section.link }).click();
    await expect(page).toHaveURL(new RegExp(`${section.path}$`));
    await expect(page.getByRole("heading", { level: 1, name: section.link })).toBeVisible();
    await expect(nav.getByRole("link", { name: section.link })).toHaveAttribute("aria-current", "page");
    await expect(nav.locator('[aria-current="page"]')).toHaveCount(1);
  }
});

test("Executions and Inbox say what will appear there, with no made-up rows", async ({ page }) => {
  const db = openE2eDb();
  const { count } = await db.selectFrom("WorkflowExecutions").select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow();
  const { open } = await db
    .selectFrom("HumanTasks")
    .select((eb) => eb.fn.countAll<string>().as("open"))
    .where("status", "in", ["PENDING", "CLAIMED"])
    .executeTakeFirstOrThrow();
  await db.destroy();
  await page.goto("/executions");
  // Exactly the runs the database holds (the first page of them), or the empty state.
  if (Number(count) === 0) {
    await expect(page.getByText("No runs yet.")).toBeVisible();
    await expect(page.getByRole("row")).toHaveCount(0);
  } else {
    await expect(page.getByRole("table", { name: "Runs" }).locator("tbody tr")).toHaveCount(Math.min(Number(count), 50));
  }

  // The inbox: the owner's open tasks (human-tasks.spec.ts covers them), or with none anywhere, the empty state.
  await page.goto("/inbox");
  await expect(page.getByRole("tablist", { name: "Inbox views" })).toBeVisible();
  if (Number(open) === 0) {
    await expect(page.getByRole("heading", { name: "Nothing waiting here" })).toBeVisible();
    await expect(page.getByRole("list", { name: "Tasks" })).toHaveCount(0);
  }
});

test("the theme switches to dark and stays dark across a reload", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/workflows");
  const html = page.locator("html");
  await expect(html).not.toHaveClass(/\bdark\b/);

  // A single-choice toggle group is a radio group to assistive technology.
  const theme = page.getByRole("radiogroup", { name: "Theme" });
  await expect(theme.getByRole("radio", { name: "System theme" })).toBeChecked();
  await theme.getByRole("radio", { name: "Dark theme" }).click();
  await expect(html).toHaveClass(/\bdark\b/);
  await expect(theme.getByRole("radio", { name: "Dark theme" })).toBeChecked();

  await page.reload();
  await expect(html).toHaveClass(/\bdark\b/);

  await expect(theme.getByRole("radio", { name: "Dark theme" })).toBeChecked();
  await theme.getByRole("radio", { name: "Light theme" }).click();
  await expect(html).not.toHaveClass(/\bdark\b/);
  await expect(html).toHaveClass(/\blight\b/);
});

test("Settings shows the live System panel: PostgreSQL 18, no pending migrations, this process's roles", async ({ page }) => {
  await page.goto("/settings");
  const system = page.getByRole("region", { name: "System" });
  await expect(system).toBeVisible();
  await expect(system.locator('dt:text-is("PostgreSQL") + dd')).toContainText(/PostgreSQL 18(\.\d+)?/);
  await expect(system.locator('dt:text-is("PostgreSQL") + dd')).toContainText("Supported");
  await expect(system.locator('dt:text-is("Pending migrations") + dd')).toContainText("0");
  await expect(system.locator('dt:text-is("Pending migrations") + dd')).toContainText("Up to date");
  await expect(system.locator('dt:text-is("Unknown migrations") + dd')).toContainText("0");
  await expect(system.locator('dt:text-is("Applied migrations") + dd')).toHaveText(/^[1-9]\d*$/);
  await expect(system.locator('dt:text-is("Process roles") + dd')).toHaveText("api");
});

test("health endpoints answer without credentials", async ({ playwright, baseURL }) => {
  const request = await playwright.request.newContext({ baseURL, storageState: SIGNED_OUT });
  const live = await request.get("/api/health/live");
  expect(live.status()).toBe(200);
  expect(await live.json()).toEqual({ status: "ok" });

  const ready = await request.get("/api/health/ready");
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toMatchObject({
    ok: true,
    database: { ok: true },
    migrations: { pending: [], unknown: [] },
  });
  await request.dispose();
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  test("the sidebar folds into a drawer that navigates to Inbox", async ({ page }) => {
    await page.goto("/");
    await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
    // The sidebar is gone at this width; the menu button is the way in.
    await expect(page.getByRole("link", { name: "Inbox" })).toBeHidden();

    await page.getByRole("button", { name: "Open navigation" }).click();
    const drawer = page.getByRole("dialog", { name: "Navigation" });
    await expect(drawer).toBeVisible();
    await expect(drawer.getByRole("link", { name: "Workflows" })).toHaveAttribute("aria-current", "page");

    await drawer.getByRole("link", { name: "Inbox" }).click();
    await expect(page).toHaveURL(/\/inbox$/);
    await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
    await expect(drawer).toBeHidden();

    await page.getByRole("button", { name: "Open navigation" }).click();
    await expect(page.getByRole("dialog", { name: "Navigation" }).getByRole("link", { name: "Inbox" })).toHaveAttribute(
      "aria-current",
      "page",
    );
  });
});
