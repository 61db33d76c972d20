import { createHmac } from "node:crypto";
import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * A run that starts itself, set up as a person would: a secret added in
 * Settings → Secrets (shown once, never again), a webhook added in the
 * workflow's Triggers drawer with its mapping previewed, then a sender's
 * signed call — over real HTTP to the web port — starts a run whose page
 * shows it finished, and the drawer lists the call.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
const suffix = uniqueSuffix();
const workflow = `e2e-hooked-${suffix}`;
const secretName = `HOOK_${suffix.replace(/[^A-Za-z0-9]/g, "_").toUpperCase()}`;
const secretValue = `whsec_${suffix}_d41d8cd98f00b204`;
const hook = `orders-${suffix}`.toLowerCase().replace(/[^a-z0-9_-]/g, "-");

test.beforeAll(async () => {
  db = openE2eDb();
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-hooks-${suffix}`, scopes: ["admin"], createdBy: null })).key;
  const client = createNodeFlowClient({ baseUrl: readE2eState().baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name: workflow,
    nodes: [{ ref: "double", type: "INLINE", evaluatorType: "javascript", expression: "$.n * 2", input: { n: "${workflow.input.n}" }, position: { x: 0, y: 0 } }],
    edges: [],
  });
});

test.afterAll(async () => {
  await db.destroy();
});

test("a secret added in Settings is listed by name only", async ({ page }) => {
  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Secrets" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Secrets" })).toBeVisible();
  await page.getByRole("button", { name: "Add secret" }).first().click();
  const form = page.getByRole("form", { name: "Add a secret" });
  await form.getByRole("textbox", { name: "Name" }).fill(secretName);
  await form.getByLabel("Value").fill(secretValue);
  await form.getByRole("button", { name: "Add secret" }).click();
  await expect(page.getByRole("grid", { name: "Secrets" }).getByRole("row").filter({ hasText: secretName })).toHaveCount(1);
  expect(await page.content()).not.toContain(secretValue);

  const stored = await db.selectFrom("Secrets").select(["sealedValue"]).where("name", "=", secretName).executeTakeFirstOrThrow();
  expect(stored.sealedValue.includes(Buffer.from(secretValue))).toBe(false);
});

test("a webhook added in the Triggers drawer starts a run from a signed call", async ({ page, baseURL }) => {
  await page.goto(`/workflows/${workflow}`);
  await page.getByRole("button", { name: "Triggers" }).click();
  const drawer = page.getByRole("dialog", { name: "Triggers" });
  await drawer.getByRole("button", { name: "Add webhook" }).click();
  const form = drawer.getByRole("form", { name: "New webhook" });
  await form.getByRole("textbox", { name: "Name" }).fill(hook);
  await form.getByRole("textbox", { name: "Secret" }).fill(secretName);
  await form.getByRole("textbox", { name: "Run input" }).fill('{ "n": "${body.n}" }');
  await form.getByRole("textbox", { name: "Sample body" }).fill('{ "n": 21 }');
  // The preview is the server's own mapping of the sample call.
  await expect(form.getByTestId("webhook-preview")).toContainText('"n": 21');
  await form.getByRole("button", { name: "Create webhook" }).click();

  const item = drawer.getByTestId(`webhook-${hook}`);
  await expect(item).toContainText(`/api/hooks/default/${hook}`);

  // The sender: GitHub's signature shape over the raw body.
  const body = JSON.stringify({ n: 21 });
  const signature = `sha256=${createHmac("sha256", secretValue).update(body).digest("hex")}`;
  const refused = await fetch(`${baseURL}/api/hooks/default/${hook}`, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=00" }, body });
  expect(refused.status).toBe(401);
  const answer = await fetch(`${baseURL}/api/hooks/default/${hook}`, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": signature }, body });
  expect(answer.status).toBe(202);
  const { workflowId } = (await answer.json()) as { workflowId: string };

  await item.getByRole("button", { name: "Latest calls" }).click();
  const calls = item.getByRole("list", { name: `Latest calls to ${hook}` });
  await expect(calls.getByRole("listitem")).toHaveCount(2);
  await expect(calls).toContainText("the signature does not match the body");

  await page.goto(`/executions/${workflowId}`);
  await expect(page.getByTestId("run-status-chip")).toContainText("Completed", { timeout: 20_000 });
  const run = await db.selectFrom("WorkflowExecutions").select(["input", "createdBy", "output"]).where("id", "=", workflowId).executeTakeFirstOrThrow();
  expect(run).toMatchObject({ input: { n: 21 }, createdBy: `webhook:${hook}` });
});
