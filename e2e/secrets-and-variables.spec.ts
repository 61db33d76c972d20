import { expect, test } from "@playwright/test";
import type { Db } from "../db/pool";
import { createNodeFlowClient } from "../sdk";
import { createApiKey } from "../server/auth/api-keys";
import { readE2eState } from "./e2e-state";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * Settings → Variables and Secrets as a person uses them, then a run that
 * reads both: the variable is listed with its value and can be changed; the
 * secret is listed by name only; an INLINE task receives the secret's value
 * (it returns it reversed, which proves it arrived) while its stored input and
 * output, and the run's page, show `***`.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
const suffix = uniqueSuffix();
const tag = suffix.replace(/[^A-Za-z0-9]/g, "_").toUpperCase();
const variableName = `REGION_${tag}`;
const secretName = `TOKEN_${tag}`;
const secretValue = `tok_${suffix}_9f8e7d6c`;
const workflow = `e2e-secret-reader-${suffix}`;

test.beforeAll(() => {
  db = openE2eDb();
});

test.afterAll(async () => {
  await db.destroy();
});

test("a variable added in Settings is listed with its value, edited and deleted", async ({ page }) => {
  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Variables" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Variables" })).toBeVisible();
  await page.getByRole("button", { name: "Add variable" }).first().click();
  const form = page.getByRole("form", { name: "Add a variable" });
  await form.getByRole("textbox", { name: "Name" }).fill("bad name!");
  await form.getByRole("textbox", { name: "Value" }).fill("eu-west-1");
  await form.getByRole("button", { name: "Add variable" }).click();
  // Refused, naming the field; nothing written.
  await expect(form.getByText(/must start with a letter or _/)).toBeVisible();
  expect(await db.selectFrom("EnvironmentVariables").select("name").where("name", "=", "bad name!").execute()).toEqual([]);
  await form.getByRole("textbox", { name: "Name" }).fill(variableName);
  await form.getByRole("button", { name: "Add variable" }).click();
  const grid = page.getByRole("grid", { name: "Variables" });
  await expect(grid.getByRole("row").filter({ hasText: variableName })).toContainText("eu-west-1");

  await grid.getByRole("button", { name: `Edit ${variableName}` }).click();
  const edit = page.getByRole("form", { name: `Edit ${variableName}` });
  await edit.getByRole("textbox", { name: "Value" }).fill("eu-central-1");
  await edit.getByRole("button", { name: "Save variable" }).click();
  await expect(grid.getByRole("row").filter({ hasText: variableName })).toContainText("eu-central-1");
  const stored = await db.selectFrom("EnvironmentVariables").select("value").where("name", "=", variableName).executeTakeFirstOrThrow();
  expect(stored.value).toBe("eu-central-1");

  const extra = `${variableName}_TMP`;
  await page.getByRole("button", { name: "Add variable" }).first().click();
  const second = page.getByRole("form", { name: "Add a variable" });
  await second.getByRole("textbox", { name: "Name" }).fill(extra);
  await second.getByRole("textbox", { name: "Value" }).fill("short-lived");
  await second.getByRole("button", { name: "Add variable" }).click();
  await grid.getByRole("button", { name: `Delete ${extra}` }).click();
  await page.getByRole("button", { name: "Delete variable" }).click();
  await expect(grid.getByRole("row").filter({ hasText: extra })).toHaveCount(0);
});

test("a secret added in Settings is listed by name only", async ({ page }) => {
  await page.goto("/settings/secrets");
  await page.getByRole("button", { name: "Add secret" }).first().click();
  const form = page.getByRole("form", { name: "Add a secret" });
  await form.getByRole("textbox", { name: "Name" }).fill(secretName);
  await form.getByLabel("Value").fill(secretValue);
  await form.getByRole("button", { name: "Add secret" }).click();
  await expect(page.getByRole("grid", { name: "Secrets" }).getByRole("row").filter({ hasText: secretName })).toHaveCount(1);
  expect(await page.content()).not.toContain(secretValue);
});

test("a run reads both: the task gets the value, the run shows ***", async ({ page }) => {
  const ns = await db.selectFrom("Namespaces").select("id").where("name", "=", "default").executeTakeFirstOrThrow();
  const apiKey = (await createApiKey(db, { namespaceId: ns.id, name: `e2e-secrets-${suffix}`, scopes: ["admin"], createdBy: null })).key;
  const client = createNodeFlowClient({ baseUrl: readE2eState().baseUrl, apiKey, namespace: "default" });
  await client.registerDefinition({
    schemaVersion: 1,
    name: workflow,
    nodes: [
      {
        ref: "read",
        type: "INLINE",
        evaluatorType: "javascript",
        expression: "({ reversed: $.token.split('').reverse().join(''), echoed: $.token, region: $.region })",
        input: { token: `\${workflow.secrets.${secretName}}`, region: `\${workflow.env.${variableName}}` },
        position: { x: 0, y: 0 },
      },
    ],
    edges: [],
  });
  const { id } = await client.startRun({ name: workflow, input: {} });

  await page.goto(`/executions/${id}`);
  await expect(page.getByTestId("run-status-chip")).toContainText("Completed", { timeout: 20_000 });
  expect(await page.content()).not.toContain(secretValue);

  const task = await db.selectFrom("TaskExecutions").select(["input", "output"]).where("workflowId", "=", id).executeTakeFirstOrThrow();
  expect(task.input).toMatchObject({ token: "***", region: `\${workflow.env.${variableName}}` });
  expect(task.output).toEqual({ result: { reversed: secretValue.split("").reverse().join(""), echoed: "***", region: "eu-central-1" } });
});
