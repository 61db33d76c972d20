import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { OWNER, openE2eDb, uniqueSuffix } from "./identity";

let db: Db;

test.beforeAll(() => {
  db = openE2eDb();
});

test.afterAll(async () => {
  await db.destroy();
});

test("an API key created in Settings → API keys is shown once, then listed by its prefix only", async ({ page }) => {
  const name = `e2e billing workers ${uniqueSuffix()}`;

  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "API keys" }).click();
  await expect(page).toHaveURL(/\/settings\/api-keys\?ns=default$/);
  await expect(page.getByRole("heading", { level: 1, name: "API keys" })).toBeVisible();

  await page.getByRole("button", { name: "Create key" }).first().click();
  const create = page.getByRole("dialog", { name: "Create an API key" });
  await create.getByRole("textbox", { name: "Name" }).fill(name);
  await create.getByRole("button", { name: "Create key" }).click();

  const issued = page.getByRole("dialog", { name: "API key created" });
  await expect(issued.getByText("It will not be shown again")).toBeVisible();
  const key = await issued.getByRole("textbox", { name: "API key" }).inputValue();
  expect(key).toMatch(/^nf_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43,}$/);
  const [, prefix = "", secret = ""] = /^nf_([^_]+)_(.+)$/.exec(key) ?? [];
  await issued.getByRole("button", { name: "I have saved the key" }).click();
  await expect(issued).toBeHidden();

  const row = page.getByRole("grid", { name: "API keys" }).getByRole("row").filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(prefix);
  await expect(row).toContainText("worker");
  // Once closed, the secret is nowhere on the page, and a reload does not bring it back.
  expect(await page.content()).not.toContain(secret);
  await page.reload();
  await expect(page.getByRole("grid", { name: "API keys" }).getByRole("row").filter({ hasText: name })).toHaveCount(1);
  expect(await page.content()).not.toContain(secret);

  // What the UI did, as the database has it: the key in `default`, acting for and made by the owner, hashed.
  const stored = await db
    .selectFrom("ApiKeys as k")
    .innerJoin("Namespaces as n", "n.id", "k.namespaceId")
    .innerJoin("Users as u", "u.id", "k.userId")
    .select(["k.prefix", "k.keyHash", "k.scopes", "k.revokedAt", "k.createdBy", "n.name as namespace", "u.id as ownerId", "u.email as actsFor"])
    .where("k.name", "=", name)
    .execute();
  expect(stored).toHaveLength(1);
  expect(stored[0]).toMatchObject({ prefix, scopes: ["worker"], revokedAt: null, namespace: "default", actsFor: OWNER.email });
  expect(stored[0]?.createdBy).toBe(`user:${stored[0]?.ownerId}`);
  expect(stored[0]?.keyHash).not.toContain(secret);
  expect(stored[0]?.keyHash).not.toBe(key);
});
