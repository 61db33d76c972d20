import { expect, test } from "@playwright/test";
import type { Browser, Locator, Page } from "@playwright/test";
import type { Db } from "../db/pool";
import type { WorkflowDefinition } from "../engine";
import { SIGNED_OUT, openE2eDb, signInThroughUi, uniqueSuffix } from "./identity";

/**
 * Issue 9 end to end, the way people do it: an editor designs a HUMAN form in
 * the inspector (drag from the palette; a required number with a maximum and a
 * default from the run's input, a comment, a read-only context field; outcomes
 * Approve/Reject; assigned to a colleague) and saves it. The colleague has the
 * inbox open when the run starts: the task and the badge arrive live. The
 * pre-filled amount is over the maximum, so the first submit is refused on the
 * field in the browser; a request rewritten past the browser is refused by the
 * server, its field error drawn on the field; then it is completed and the run
 * goes on, live on its diagram. The form is saved as a template, reused by a
 * second workflow, its task reassigned by an operator, and two browsers submit it
 * at once: one wins, the other is told; a second tab hears of it through the
 * first tab's stream. The database is asserted after each step that matters;
 * the inbox is checked on a 390 px phone.
 */

test.describe.configure({ mode: "serial" });

let db: Db;
test.beforeAll(() => {
  db = openE2eDb();
});
test.afterAll(async () => {
  await db.destroy();
});

const suffix = uniqueSuffix();
const reviewer = { email: `rita.${suffix}@e2e.example`, displayName: `Rita ${suffix}`, password: "ledger quartz harbor 1911" };
const workflow = `e2e-approval-${suffix}`;
const TITLE = `Approve expense ${suffix}`;
let runId = "";
/** The second workflow's run: its task ends up assigned to the reviewer. */
let reuseRun = "";

const node = (page: Page, ref: string): Locator => page.locator(`.react-flow__node[data-id="${ref}"]`);
const runState = (page: Page, ref: string): Locator => node(page, ref).locator("[data-run-status]");
const pane = (page: Page): Locator => page.locator(".react-flow__pane");

async function dragFromPalette(page: Page, label: string, at: { x: number; y: number }) {
  await page.getByRole("button", { name: `Add ${label}` }).dragTo(pane(page), { targetPosition: at });
}

async function connect(page: Page, from: string, to: string) {
  const a = (await node(page, from).locator(".react-flow__handle.source").boundingBox())!;
  const b = (await node(page, to).locator(".react-flow__handle.target").boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
}

/** Types into a one-line CodeMirror field (completion closed after). */
async function typeExpression(page: Page, field: Locator, text: string) {
  await field.click();
  await page.keyboard.insertText(text);
  await page.keyboard.press("Escape");
}

async function choose(page: Page, trigger: Locator, option: string) {
  await trigger.click();
  await page.getByRole("option", { name: option, exact: true }).click();
}

async function signedOutPage(browser: Browser, baseURL: string | undefined): Promise<Page> {
  const context = await browser.newContext({ baseURL, storageState: SIGNED_OUT });
  return context.newPage();
}

test("the owner adds the reviewer and makes them an operator of the default namespace", async ({ page }) => {
  await page.goto("/settings/users");
  await page.getByRole("button", { name: "Add user" }).click();
  const addUser = page.getByRole("dialog", { name: "Add a user" });
  await addUser.getByRole("textbox", { name: "Email" }).fill(reviewer.email);
  await addUser.getByRole("textbox", { name: "Display name" }).fill(reviewer.displayName);
  await addUser.getByLabel("Initial password", { exact: true }).fill(reviewer.password);
  await addUser.getByRole("button", { name: "Add user" }).click();
  await expect(addUser).toBeHidden();

  await page.goto("/settings/namespaces/default");
  const addMember = page.getByRole("form", { name: "Add a member" });
  await addMember.getByRole("textbox", { name: "Email" }).fill(reviewer.email);
  await addMember.getByRole("button", { name: "Role" }).click();
  await page.getByRole("option", { name: /^Operator/ }).click();
  await addMember.getByRole("button", { name: "Add member" }).click();
  await expect(page.getByRole("grid", { name: "Members of default" }).getByRole("row").filter({ hasText: reviewer.email })).toHaveCount(1);
});

test("a HUMAN form designed in the inspector is saved as JSON Schema and UI schema", async ({ page }) => {
  test.slow();
  await page.goto("/workflows/new");
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
  const inspector = page.getByRole("complementary", { name: "Inspector" });
  const nameField = inspector.getByRole("textbox", { name: /^Name/ });
  await nameField.fill(workflow);
  await nameField.blur();

  await dragFromPalette(page, "Human task", { x: 300, y: 100 });
  await expect(node(page, "human")).toBeVisible();
  await dragFromPalette(page, "No-op", { x: 300, y: 360 });
  await expect(node(page, "noop")).toBeVisible();
  await connect(page, "human", "noop");
  await expect(page.locator(".react-flow__edge")).toHaveCount(1);

  await node(page, "human").click();
  await inspector.getByRole("region", { name: "General" }).getByRole("textbox", { name: "Label" }).fill(TITLE);

  // Outcomes: the two default buttons renamed.
  for (const [i, outcome] of ["Approve", "Reject"].entries()) {
    const item = inspector.getByRole("textbox", { name: `Outcomes ${i + 1}` });
    await item.fill(outcome);
    await item.press("Enter");
  }

  // For one person, by email.
  await choose(page, inspector.getByRole("button", { name: /Assignee kind/ }), "User");
  await inspector.getByRole("textbox", { name: "Assignee email" }).fill(reviewer.email);

  // Field 1: a required number of at most 100.
  await inspector.getByRole("button", { name: "Add field" }).click();
  const amount = inspector.getByRole("group", { name: "Field 1" });
  await choose(page, amount.getByRole("button", { name: /Type$/ }), "Number");
  await amount.getByRole("textbox", { name: "Label" }).fill("Amount");
  await amount.getByRole("textbox", { name: "Key" }).fill("amount");
  await amount.getByRole("textbox", { name: "Key" }).press("Enter");
  await amount.getByText("Required", { exact: true }).click();
  await amount.getByLabel("Maximum").fill("100");
  await amount.getByLabel("Maximum").blur();
  // Pre-filled from the run's input when the task opens.
  await typeExpression(page, amount.getByRole("textbox", { name: "Default value" }), "${workflow.input.amount}");

  // Field 2: a comment.
  await inspector.getByRole("button", { name: "Add field" }).click();
  const comment = inspector.getByRole("group", { name: "Field 2" });
  await comment.getByRole("textbox", { name: "Label" }).fill("Comment");
  await comment.getByRole("textbox", { name: "Key" }).fill("comment");
  await comment.getByRole("textbox", { name: "Key" }).press("Enter");

  // Field 3: read-only context from the run; its key follows its label.
  await inspector.getByRole("button", { name: "Add field" }).click();
  const order = inspector.getByRole("group", { name: "Field 3" });
  await order.getByRole("textbox", { name: "Label" }).fill("Order");
  await expect(order.getByRole("textbox", { name: "Key" })).toHaveValue("order");
  await order.getByText("Read-only context", { exact: true }).click();
  await typeExpression(page, order.getByRole("textbox", { name: "Value" }), "${workflow.input.order}");

  // The live preview draws the form and checks it against the schema as the inbox will.
  const preview = inspector.getByRole("region", { name: "Form preview" });
  await expect(preview.getByLabel("Amount")).toBeVisible();
  await preview.getByLabel("Amount").fill("500");
  await preview.getByRole("button", { name: "Approve" }).click();
  await expect(preview.locator('[data-field="amount"]')).toContainText("must be <= 100");

  await page.getByRole("button", { name: "Save", exact: true }).click();
  const saveDialog = page.getByRole("dialog", { name: "Save a new version" });
  await saveDialog.getByRole("button", { name: "Save version" }).click();
  await expect(saveDialog).toBeHidden();

  const stored = await db.selectFrom("WorkflowDefinitions").select("graph").where("name", "=", workflow).executeTakeFirstOrThrow();
  const human = (stored.graph as WorkflowDefinition).nodes.find((n) => n.ref === "human") as Record<string, unknown>;
  expect(human.outcomes).toEqual(["Approve", "Reject"]);
  expect(human.assignee).toBe(`user:${reviewer.email}`);
  expect(human.form).toEqual({
    schema: {
      type: "object",
      properties: { amount: { type: "number", title: "Amount", maximum: 100 }, comment: { type: "string", title: "Comment" }, order: { type: "string", title: "Order" } },
      required: ["amount"],
    },
    uiSchema: { order: { "ui:readonly": true }, "ui:order": ["amount", "comment", "order"] },
  });
  expect(human.input).toEqual({ amount: "${workflow.input.amount}", order: "${workflow.input.order}" });

});

test("the run lands in the reviewer's open inbox live; refused on the field, then completed, the run goes on live", async ({ page, browser, baseURL }) => {
  test.slow();
  const them = await signedOutPage(browser, baseURL);
  try {
    // The reviewer has the inbox open before there is anything in it.
    await signInThroughUi(them, reviewer);
    const inboxLink = them.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /Inbox/ });
    await inboxLink.click();
    await expect(them.getByRole("heading", { name: "Nothing waiting here" })).toBeVisible();
    await expect(inboxLink.getByTestId("inbox-count")).toHaveCount(0);

    // The owner runs the saved version from the editor and watches its diagram.
    await page.goto(`/workflows/${workflow}`);
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const runDialog = page.getByRole("dialog", { name: "Run workflow" });
    await runDialog.getByRole("textbox", { name: "Input JSON" }).click();
    await page.keyboard.press("Control+a");
    await page.keyboard.insertText('{"amount": 120, "order": "PO-7"}');
    await runDialog.getByRole("button", { name: "Start run" }).click();
    await expect(page).toHaveURL(/\/executions\/[0-9a-f-]{36}$/);
    runId = new URL(page.url()).pathname.split("/").at(-1)!;
    await expect(runState(page, "human")).toHaveAttribute("data-run-status", "IN_PROGRESS", { timeout: 15_000 });
    const opened = await db.selectFrom("HumanTasks").select(["id", "status", "assigneeKind"]).where("workflowId", "=", runId).executeTakeFirstOrThrow();
    expect(opened).toEqual({ id: expect.any(String) as unknown, status: "PENDING", assigneeKind: "user" });
    // On the run page the HUMAN task's panel leads to its inbox item, not to a raw-JSON completion.
    await node(page, "human").click();
    const panel = page.getByTestId("task-panel");
    await expect(panel.getByRole("link", { name: "Open in inbox" })).toHaveAttribute("href", `/inbox?task=${opened.id}`);
    await expect(panel.getByRole("button", { name: "Complete by hand" })).toHaveCount(0);

    // No reload: the stream brings the task and its count.
    await expect(inboxLink.getByTestId("inbox-count")).toContainText("1", { timeout: 15_000 });
    await expect(them.getByTestId("count-mine")).toHaveText("1");
    await them.getByRole("link", { name: new RegExp(TITLE) }).click();
    const task = them.getByRole("article", { name: TITLE });
    await expect(task.getByRole("link", { name: new RegExp(workflow) })).toHaveAttribute("href", `/executions/${runId}`);

    // Pre-filled from the run: the amount as its default, the order as read-only context.
    await expect(task.getByLabel("Amount")).toHaveValue("120");
    await expect(task.getByLabel("Order")).toHaveValue("PO-7");
    await expect(task.getByLabel("Order")).not.toBeEditable();
    await task.getByRole("button", { name: "Run context" }).click();
    await expect(task.getByLabel("Workflow input")).toContainText('"order": "PO-7"');

    // Over the maximum: the error is on the field, and the server saw nothing.
    await task.getByLabel("Comment").fill("Receipts attached");
    await task.getByRole("button", { name: "Approve" }).click();
    await expect(task.locator('[data-field="amount"]')).toHaveAttribute("data-invalid", "true");
    await expect(task.locator('[data-field="amount"]')).toContainText("must be <= 100");
    const before = await db.selectFrom("HumanTasks").select(["status", "response"]).where("workflowId", "=", runId).executeTakeFirstOrThrow();
    expect(before.status).toBe("PENDING");
    expect(before.response).toBeNull();

    await task.getByLabel("Amount").fill("50");
    await expect(task.locator('[data-field="amount"]')).not.toContainText("must be <= 100");

    // A client that skips the browser's check (the request rewritten on its way out): the server's own
    // validation refuses it, and its field error lands on the field.
    await them.route("**/api/trpc/humanTasks.submit**", async (route) => {
      const body = JSON.parse(route.request().postData() ?? "{}") as Record<string, { data: Record<string, unknown> }>;
      for (const call of Object.values(body)) call.data.amount = 5000;
      await route.continue({ postData: JSON.stringify(body) });
    });
    await task.getByRole("button", { name: "Approve" }).click();
    await expect(task.getByRole("alert").filter({ hasText: "Some fields need attention" })).toBeVisible();
    await expect(task.locator('[data-field="amount"]')).toHaveAttribute("data-invalid", "true");
    await expect(task.locator('[data-field="amount"] [data-slot="field-error"]')).not.toBeEmpty();
    expect((await db.selectFrom("HumanTasks").select("status").where("workflowId", "=", runId).executeTakeFirstOrThrow()).status).toBe("PENDING");
    await them.unroute("**/api/trpc/humanTasks.submit**");

    await task.getByRole("button", { name: "Approve" }).click();
    await expect(task.getByRole("status")).toContainText("Completed");

    // The owner's diagram moved on by itself.
    await expect(runState(page, "human")).toHaveAttribute("data-run-status", "COMPLETED", { timeout: 15_000 });
    await expect(runState(page, "noop")).toHaveAttribute("data-run-status", "COMPLETED", { timeout: 15_000 });
    await expect(page.getByTestId("run-status-chip")).toContainText("Completed");

    const user = await db.selectFrom("Users").select("id").where("email", "=", reviewer.email).executeTakeFirstOrThrow();
    const row = await db.selectFrom("HumanTasks").selectAll().where("workflowId", "=", runId).executeTakeFirstOrThrow();
    expect(row.status).toBe("COMPLETED");
    expect(row.completedByUserId).toBe(user.id);
    const output = await db.selectFrom("TaskExecutions").select(["status", "output"]).where("workflowId", "=", runId).where("refName", "=", "human").executeTakeFirstOrThrow();
    expect(output.status).toBe("COMPLETED");
    expect(output.output).toMatchObject({ amount: 50, comment: "Receipts attached", order: "PO-7", outcome: "Approve", completedBy: { userId: user.id, email: reviewer.email } });

    // Nothing left for them: the badge goes away, live.
    await expect(them.getByTestId("inbox-count")).toHaveCount(0);

    // On a phone: the list, then the task, never wider than the screen.
    await them.setViewportSize({ width: 390, height: 844 });
    await them.goto("/inbox?tab=closed");
    const noSidewaysScroll = () => them.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    const closed = them.getByRole("link", { name: new RegExp(TITLE) });
    await expect(closed).toBeVisible();
    expect(await noSidewaysScroll()).toBe(true);
    await closed.click();
    const done = them.getByRole("article", { name: TITLE });
    await expect(done).toBeVisible();
    await expect(them.getByRole("link", { name: new RegExp(TITLE) })).toBeHidden();
    await expect(done.getByLabel("Amount")).toHaveValue("50");
    await expect(done.getByLabel("Amount")).toBeDisabled();
    expect(await noSidewaysScroll()).toBe(true);
    await them.getByRole("link", { name: "Back to the list" }).click();
    await expect(them.getByRole("link", { name: new RegExp(TITLE) })).toBeVisible();
  } finally {
    await them.context().close();
  }
});

test("the form saved as a template is reused by another workflow, pinned to its version; its task is reassigned by an operator", async ({ page }) => {
  test.slow();
  const template = `expense-form-${suffix}`;
  await page.goto(`/workflows/${workflow}`);
  await node(page, "human").click();
  const inspector = page.getByRole("complementary", { name: "Inspector" });
  await inspector.getByRole("button", { name: "Save as template" }).click();
  const saveDialog = page.getByRole("dialog", { name: "Save as form template" });
  await saveDialog.getByRole("textbox", { name: "Template name" }).fill(template);
  await saveDialog.getByRole("textbox", { name: "Description" }).fill("Expense approval");
  await saveDialog.getByRole("button", { name: "Save template" }).click();
  await expect(saveDialog.getByRole("status")).toContainText(`Saved ${template} version 1`);
  await saveDialog.getByRole("button", { name: "Close" }).first().click();
  const row = await db.selectFrom("FormTemplates").select(["version", "schema", "uiSchema"]).where("name", "=", template).executeTakeFirstOrThrow();
  expect(row.version).toBe(1);
  expect(row.schema).toMatchObject({ properties: { amount: { type: "number", maximum: 100 } }, required: ["amount"] });
  expect(row.uiSchema).toEqual({ order: { "ui:readonly": true }, "ui:order": ["amount", "comment", "order"] });

  const other = `e2e-reuse-${suffix}`;
  await page.goto("/workflows/new");
  const nameField = inspector.getByRole("textbox", { name: /^Name/ });
  await nameField.fill(other);
  await nameField.blur();
  await dragFromPalette(page, "Human task", { x: 300, y: 120 });
  await node(page, "human").click();
  await inspector.getByRole("region", { name: "General" }).getByRole("textbox", { name: "Label" }).fill(`Reuse ${suffix}`);
  await inspector.getByRole("button", { name: "Use template" }).click();
  const useDialog = page.getByRole("dialog", { name: "Use a form template" });
  await useDialog.getByRole("button", { name: `Use ${template}` }).click();
  await expect(useDialog).toBeHidden();
  await expect(inspector.getByTestId("form-template")).toContainText(`${template} version 1`);
  // The preview renders the stored form.
  await expect(inspector.getByRole("region", { name: "Form preview" }).getByLabel("Amount")).toBeVisible();

  await page.getByRole("button", { name: "Save", exact: true }).click();
  const versionDialog = page.getByRole("dialog", { name: "Save a new version" });
  await versionDialog.getByRole("button", { name: "Save version" }).click();
  await expect(versionDialog).toBeHidden();
  const stored = await db.selectFrom("WorkflowDefinitions").select("graph").where("name", "=", other).executeTakeFirstOrThrow();
  const human = (stored.graph as WorkflowDefinition).nodes.find((n) => n.ref === "human") as Record<string, unknown>;
  expect(human.form).toEqual({ template: { name: template, version: 1 } });

  // Run it: the task is for anyone, so it waits unclaimed, with the template's form.
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("dialog", { name: "Run workflow" }).getByRole("button", { name: "Start run" }).click();
  await expect(page).toHaveURL(/\/executions\/[0-9a-f-]{36}$/);
  reuseRun = new URL(page.url()).pathname.split("/").at(-1)!;
  await expect.poll(async () => (await db.selectFrom("HumanTasks").select("status").where("workflowId", "=", reuseRun).executeTakeFirst())?.status, { timeout: 15_000 }).toBe("PENDING");

  await page.goto("/inbox?tab=unclaimed");
  await page.getByRole("link", { name: new RegExp(`Reuse ${suffix}`) }).click();
  const task = page.getByRole("article", { name: `Reuse ${suffix}` });
  await expect(task.getByLabel("Amount")).toBeVisible();
  await expect(task.getByLabel("Amount")).toBeEnabled();

  // An operator hands it to the reviewer.
  await task.getByRole("button", { name: "Reassign" }).click();
  const reassign = task.getByRole("form", { name: "Reassign the task" });
  await choose(page, reassign.getByRole("button", { name: /New assignee kind/ }), "User");
  await reassign.getByRole("textbox", { name: "New assignee email" }).fill(reviewer.email);
  await reassign.getByRole("button", { name: "Reassign" }).click();
  await expect(reassign).toBeHidden();
  await expect(task.locator("dd", { hasText: reviewer.email })).toBeVisible();
  const user = await db.selectFrom("Users").select("id").where("email", "=", reviewer.email).executeTakeFirstOrThrow();
  const assigned = await db.selectFrom("HumanTasks").select(["assigneeKind", "assigneeUserId", "status"]).where("workflowId", "=", reuseRun).executeTakeFirstOrThrow();
  expect(assigned).toEqual({ assigneeKind: "user", assigneeUserId: user.id, status: "PENDING" });
});

test("two browsers submit one task: the first wins, the stale one is told plainly, and nothing changes twice", async ({ browser, baseURL }) => {
  test.slow();
  expect(reuseRun).not.toBe("");
  const { id } = await db.selectFrom("HumanTasks").select("id").where("workflowId", "=", reuseRun).executeTakeFirstOrThrow();
  const first = await signedOutPage(browser, baseURL);
  // The same person in a second browser that hears nothing live (its stream cut), so it still shows the task
  // open. (A second tab would not do: the tabs of one browser share one stream, relayed between them.)
  const second = await signedOutPage(browser, baseURL);
  try {
    await signInThroughUi(first, reviewer);
    await second.route("**/api/inbox/stream**", (route) => route.abort());
    await signInThroughUi(second, reviewer);
    for (const p of [first, second]) await p.goto(`/inbox?tab=mine&task=${id}`);
    // Another tab of the first browser, whose own stream could not connect: it hears through the first tab's.
    const sibling = await first.context().newPage();
    await sibling.route("**/api/inbox/stream**", (route) => route.abort());
    await sibling.goto(`/inbox?tab=mine&task=${id}`);
    await expect(sibling.getByRole("article", { name: `Reuse ${suffix}` })).toHaveAttribute("data-task-status", "PENDING");
    const a = first.getByRole("article", { name: `Reuse ${suffix}` });
    const b = second.getByRole("article", { name: `Reuse ${suffix}` });
    await expect(b.getByRole("button", { name: "approve" })).toBeEnabled();

    await a.getByLabel("Amount").fill("10");
    await a.getByRole("button", { name: "reject" }).click();
    await expect(a.getByRole("status")).toContainText("Completed");
    await expect(sibling.getByRole("article", { name: `Reuse ${suffix}` })).toHaveAttribute("data-task-status", "COMPLETED");

    await b.getByLabel("Amount").fill("20");
    await b.getByRole("button", { name: "approve" }).click();
    await expect(b.getByRole("alert").filter({ hasText: "This task has moved on" })).toBeVisible();
    // The refusal reloads the task: it shows what the first tab submitted.
    await expect(b.getByLabel("Amount")).toHaveValue("10");

    const row = await db.selectFrom("HumanTasks").select(["status", "outcome"]).where("id", "=", id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "COMPLETED", outcome: "reject" });
    const output = await db.selectFrom("TaskExecutions").select("output").where("workflowId", "=", reuseRun).where("refName", "=", "human").executeTakeFirstOrThrow();
    expect(output.output).toMatchObject({ amount: 10, outcome: "reject" });
  } finally {
    await first.context().close();
    await second.context().close();
  }
});
