import { expect, test } from "@playwright/test";
import type { Locator, Page } from "@playwright/test";
import type { Db } from "../db/pool";
import type { WorkflowDefinition } from "../engine";
import { openE2eDb, uniqueSuffix } from "./identity";

/**
 * The editor, used the way a person uses it: drag from the palette, connect
 * handles, type in the inspector, save, reload; every assertion that matters
 * is on what the database then holds.
 */

let db: Db;
test.beforeAll(() => {
  db = openE2eDb();
});
test.afterAll(async () => {
  await db.destroy();
});

const node = (page: Page, ref: string): Locator => page.locator(`.react-flow__node[data-id="${ref}"]`);
const pane = (page: Page): Locator => page.locator(".react-flow__pane");

async function storedVersions(name: string) {
  return db.selectFrom("WorkflowDefinitions").select(["version", "graph", "message"]).where("name", "=", name).orderBy("version").execute();
}

async function dragFromPalette(page: Page, label: string, at: { x: number; y: number }) {
  await page.getByRole("button", { name: `Add ${label}` }).dragTo(pane(page), { targetPosition: at });
}

/** Drags from one node's source handle (a SWITCH case's, when given) to another's target handle. */
async function connect(page: Page, from: string, to: string, caseLabel?: string) {
  const source = caseLabel
    ? node(page, from).locator(`[data-case="${caseLabel}"] .react-flow__handle.source`)
    : node(page, from).locator(".react-flow__handle.source");
  const a = (await source.boundingBox())!;
  const b = (await node(page, to).locator(".react-flow__handle.target").boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
}

async function newWorkflow(page: Page, name: string) {
  await page.goto("/workflows/new");
  await expect(page.getByTestId("workflow-editor")).toBeVisible();
  const nameField = page.getByRole("complementary", { name: "Inspector" }).getByRole("textbox", { name: /^Name/ });
  await nameField.fill(name);
  await nameField.blur();
}

async function save(page: Page, message?: string) {
  await page.getByRole("button", { name: "Save", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Save a new version" });
  if (message) await dialog.getByRole("textbox", { name: "Message (optional)" }).fill(message);
  await dialog.getByRole("button", { name: "Save version" }).click();
  await expect(dialog).toBeHidden();
}

test("draw, connect, configure, save and reload: the database holds exactly what was drawn", async ({ page }) => {
  const name = `e2e-drawn-${uniqueSuffix()}`;
  await newWorkflow(page, name);

  await dragFromPalette(page, "Worker task", { x: 300, y: 100 });
  await expect(node(page, "simple")).toBeVisible();
  await dragFromPalette(page, "Worker task", { x: 300, y: 380 });
  await expect(node(page, "simple_2")).toBeVisible();

  // A node cannot connect to itself: refused, with the reason on screen.
  await connect(page, "simple", "simple");
  await expect(page.getByTestId("editor-notice")).toContainText("cannot connect to itself");

  await connect(page, "simple", "simple_2");
  await expect(page.locator(".react-flow__edge")).toHaveCount(1);

  // Configure the second node in the inspector.
  await node(page, "simple_2").click();
  const inspector = page.getByRole("complementary", { name: "Inspector" });
  await inspector.getByLabel("Task type").fill("charge_card");
  await inspector.getByLabel("Task type").blur();
  await expect(node(page, "simple_2")).toContainText("charge_card");

  await save(page, "first draft");
  await expect(page).toHaveURL(new RegExp(`/workflows/${name}$`));

  const [v1] = await storedVersions(name);
  expect(v1?.message).toBe("first draft");
  const graph = v1!.graph as WorkflowDefinition;
  expect(graph.name).toBe(name);
  expect(graph.nodes.map((n) => [n.ref, n.type, n.name])).toEqual([
    ["simple", "SIMPLE", "my_task"],
    ["simple_2", "SIMPLE", "charge_card"],
  ]);
  expect(graph.edges.map((e) => [e.source, e.target])).toEqual([["simple", "simple_2"]]);

  // Where React Flow placed each node, in canvas coordinates (its transform), by ref.
  const placed = (): Promise<Record<string, { x: number; y: number } | null>> =>
    page.locator(".react-flow__node").evaluateAll((els): Record<string, { x: number; y: number } | null> =>
      Object.fromEntries(
        els.map((e) => {
          const m = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec((e as HTMLElement).style.transform);
          return [e.getAttribute("data-id") ?? "", m ? { x: Number(m[1]), y: Number(m[2]) } : null];
        }),
      ),
    );
  const before = await placed();
  expect(before).toEqual(Object.fromEntries(graph.nodes.map((n) => [n.ref, n.position])));
  // A reload draws the identical diagram from the stored positions.
  await page.reload();
  await expect(node(page, "simple_2")).toBeVisible();
  expect(await placed()).toEqual(before);

  // Undo and redo, one step per action.
  await dragFromPalette(page, "No-op", { x: 520, y: 220 });
  await expect(node(page, "noop")).toBeVisible();
  await pane(page).click({ position: { x: 40, y: 40 } });
  await page.keyboard.press("Control+z");
  await expect(node(page, "noop")).toHaveCount(0);
  await page.keyboard.press("Control+Shift+z");
  await expect(node(page, "noop")).toBeVisible();

  // Dropped onto the edge, a node is inserted into it.
  await page.keyboard.press("Control+z");
  const edgeBox = (await page.locator(".react-flow__edge").first().boundingBox())!;
  const paneBox = (await pane(page).boundingBox())!;
  await dragFromPalette(page, "No-op", { x: edgeBox.x - paneBox.x + edgeBox.width / 2, y: edgeBox.y - paneBox.y + edgeBox.height / 2 });
  await expect(node(page, "noop")).toBeVisible();
  await expect(page.locator(".react-flow__edge")).toHaveCount(2);
  await save(page, "inserted a step");
  const versions = await storedVersions(name);
  expect(versions.map((v) => v.version)).toEqual([1, 2]);
  expect((versions[1]!.graph as WorkflowDefinition).edges.map((e) => [e.source, e.target])).toEqual([
    ["simple", "noop"],
    ["noop", "simple_2"],
  ]);
});

test("an edit in the JSON view shows on the canvas at once; broken JSON keeps the diagram", async ({ page }) => {
  await newWorkflow(page, `e2e-json-${uniqueSuffix()}`);
  await dragFromPalette(page, "Worker task", { x: 300, y: 150 });
  await expect(node(page, "simple")).toBeVisible();

  await page.getByRole("tab", { name: "JSON" }).click();
  const editor = page.getByRole("textbox", { name: "Definition JSON" });
  await expect(editor).toContainText('"ref": "simple"');
  const text = (await editor.textContent()) ?? "";
  expect(text).toContain("my_task");

  // Broken JSON: the location is shown and the diagram keeps the last valid state.
  await editor.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{ "schemaVersion": 1, "name": oops }');
  await expect(page.getByTestId("workflow-editor").getByRole("alert")).toContainText("Line 1, column");
  await page.getByRole("tab", { name: "Diagram" }).click();
  await expect(node(page, "simple")).toBeVisible();

  await page.getByRole("tab", { name: "JSON" }).click();
  await page.getByRole("textbox", { name: "Definition JSON" }).click();
  await page.keyboard.press("Control+a");
  const definition = {
    schemaVersion: 1,
    name: "from-json",
    nodes: [
      { ref: "simple", type: "SIMPLE", name: "my_task", position: { x: 0, y: 0 }, label: "Typed in JSON" },
      { ref: "after", type: "NOOP", position: { x: 0, y: 140 } },
    ],
    edges: [{ source: "simple", target: "after" }],
  };
  await page.keyboard.insertText(JSON.stringify(definition, null, 2));
  await page.getByRole("tab", { name: "Diagram" }).click();
  await expect(node(page, "simple")).toContainText("Typed in JSON");
  await expect(node(page, "after")).toBeVisible();
  await expect(page.locator(".react-flow__edge")).toHaveCount(1);
});

test("an invalid node is marked on the canvas and blocks saving", async ({ page }) => {
  const name = `e2e-invalid-${uniqueSuffix()}`;
  await newWorkflow(page, name);
  await dragFromPalette(page, "Switch", { x: 300, y: 120 });
  await dragFromPalette(page, "Worker task", { x: 300, y: 340 });
  // A SWITCH edge needs a case: draw from its default handle, then make the task's type empty.
  await connect(page, "switch", "simple", "default");
  await node(page, "simple").click();
  const taskType = page.getByRole("complementary", { name: "Inspector" }).getByLabel("Task type");
  await taskType.fill("");
  await taskType.blur();

  await expect(node(page, "simple").getByTestId("node-problems")).toBeVisible();
  await expect(page.getByTestId("problem-count")).not.toHaveText("0");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByTestId("editor-notice")).toContainText("Fix the");
  await expect(page.getByRole("dialog", { name: "Save a new version" })).toHaveCount(0);
  // The problems list jumps to the node.
  await page.getByRole("list", { name: "Problems" }).getByRole("button").first().click();
  await expect(page.getByRole("complementary", { name: "Inspector" }).getByLabel("Task type")).toBeVisible();
  expect(await storedVersions(name)).toHaveLength(0);
});

test("copy and paste through the clipboard, and the shortcuts dialog lists them", async ({ page }) => {
  await newWorkflow(page, `e2e-clipboard-${uniqueSuffix()}`);
  await dragFromPalette(page, "Worker task", { x: 300, y: 150 });
  await node(page, "simple").click();
  await page.keyboard.press("Control+c");
  await page.keyboard.press("Control+v");
  await expect(node(page, "simple_2")).toBeVisible();
  await page.keyboard.press("Control+d");
  await expect(node(page, "simple_3")).toBeVisible();

  await page.keyboard.press("Shift+?");
  const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(dialog).toContainText("Undo the last change");
  await expect(dialog).toContainText("Copy the selection");
});

test("a loop holds the nodes dropped into it; leaving with unsaved changes asks first", async ({ page }) => {
  const name = `e2e-loop-${uniqueSuffix()}`;
  await newWorkflow(page, name);
  await dragFromPalette(page, "Loop", { x: 330, y: 220 });
  await expect(node(page, "do_while")).toBeVisible();
  const loop = (await node(page, "do_while").boundingBox())!;
  const paneBox = (await pane(page).boundingBox())!;
  await dragFromPalette(page, "Worker task", { x: loop.x - paneBox.x + loop.width / 2, y: loop.y - paneBox.y + loop.height / 2 + 10 });
  await expect(node(page, "simple")).toBeVisible();

  // Unsaved: the back link asks before it discards anything.
  await page.getByRole("link", { name: "Back to workflows" }).click();
  const ask = page.getByRole("alertdialog", { name: "Leave without saving?" });
  await expect(ask).toBeVisible();
  await ask.getByRole("button", { name: "Stay" }).click();
  await expect(page.getByTestId("workflow-editor")).toBeVisible();

  await save(page);
  const [v1] = await storedVersions(name);
  const graph = v1!.graph as WorkflowDefinition;
  expect(graph.nodes.find((n) => n.ref === "simple")?.parent).toBe("do_while");
});

test("importing a Conductor WorkflowDef draws its diagram", async ({ page }, testInfo) => {
  const name = `e2e-imported-${uniqueSuffix()}`;
  const conductor = {
    name: "orders_from_conductor",
    version: 3,
    schemaVersion: 2,
    tasks: [
      { name: "reserve_stock", taskReferenceName: "reserve", type: "SIMPLE", inputParameters: { sku: "${workflow.input.sku}" } },
      {
        name: "route",
        taskReferenceName: "route",
        type: "SWITCH",
        evaluatorType: "value-param",
        expression: "kind",
        inputParameters: { kind: "${reserve.output.kind}" },
        decisionCases: { express: [{ name: "courier", taskReferenceName: "courier", type: "SIMPLE" }] },
        defaultCase: [{ name: "post", taskReferenceName: "post", type: "SIMPLE" }],
      },
    ],
  };
  const file = testInfo.outputPath("orders.conductor.json");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(file, JSON.stringify(conductor));

  await page.goto("/workflows");
  await page.getByRole("button", { name: "Import" }).first().click();
  const dialog = page.getByRole("dialog", { name: "Import a workflow" });
  await dialog.locator('input[type="file"]').setInputFiles(file);
  await dialog.getByRole("textbox", { name: "Name" }).fill(name);
  await dialog.getByRole("button", { name: "Import and open" }).click();
  await expect(page).toHaveURL(new RegExp(`/workflows/${name}$`));
  for (const ref of ["reserve", "route", "courier", "post"]) await expect(node(page, ref)).toBeVisible();
  await expect(page.locator(".react-flow__edge")).toHaveCount(3);
  const [v1] = await storedVersions(name);
  expect((v1!.graph as WorkflowDefinition).nodes.map((n) => n.ref).sort()).toEqual(["courier", "post", "reserve", "route"]);
});

test("a Conductor WorkflowDef with tasks after a TERMINATE imports, its warnings marked on the nodes apart from errors", async ({ page }, testInfo) => {
  const name = `e2e-warned-${uniqueSuffix()}`;
  const conductor = {
    name: "warned_from_conductor",
    tasks: [
      { name: "check", taskReferenceName: "check", type: "SIMPLE", inputParameters: { id: "${workflow.input.id}" } },
      { name: "stop", taskReferenceName: "stop", type: "TERMINATE", inputParameters: { terminationStatus: "COMPLETED" } },
      { name: "late", taskReferenceName: "late", type: "SIMPLE", inputParameters: { v: "${ghost.output.v}" } },
    ],
  };
  const file = testInfo.outputPath("warned.conductor.json");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(file, JSON.stringify(conductor));

  await page.goto("/workflows");
  await page.getByRole("button", { name: "Import" }).first().click();
  const dialog = page.getByRole("dialog", { name: "Import a workflow" });
  await dialog.locator('input[type="file"]').setInputFiles(file);
  await dialog.getByRole("textbox", { name: "Name" }).fill(name);
  await dialog.getByRole("button", { name: "Import and open" }).click();
  await expect(page).toHaveURL(new RegExp(`/workflows/${name}$`));
  // Saved as Conductor would register it; the task after the TERMINATE is kept and marked as a warning.
  const [v1] = await storedVersions(name);
  expect((v1!.graph as WorkflowDefinition).nodes.map((n) => n.ref).sort()).toEqual(["check", "late", "stop"]);
  await expect(node(page, "late").getByTestId("node-problems")).toHaveAttribute("data-severity", "warning");
  await expect(node(page, "check").getByTestId("node-problems")).toHaveCount(0);
  await page.getByRole("tab", { name: /Problems/ }).click();
  await expect(page.getByTestId("warnings-only")).toBeVisible();
  await expect(page.getByRole("list", { name: "Problems" }).locator('li[data-severity="warning"]')).toHaveCount(2);

  // An error beside the warnings is marked as an error, and stops a save.
  await node(page, "check").click();
  await page.getByRole("tab", { name: "Inspector" }).click();
  const taskType = page.getByRole("complementary", { name: "Inspector" }).getByLabel("Task type");
  await taskType.fill("");
  await taskType.blur();
  await expect(node(page, "check").getByTestId("node-problems")).toHaveAttribute("data-severity", "error");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByTestId("editor-notice")).toContainText("Fix the problem first");
});

test("Run starts the saved version with the given input and opens the run", async ({ page }) => {
  const name = `e2e-run-${uniqueSuffix()}`;
  await newWorkflow(page, name);
  await dragFromPalette(page, "No-op", { x: 300, y: 150 });
  await expect(page.getByRole("button", { name: "Run", exact: true })).toBeDisabled();
  await save(page);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Run workflow" });
  await dialog.getByRole("textbox", { name: "Input JSON" }).click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText('{"order": 42}');
  await dialog.getByRole("button", { name: "Start run" }).click();
  await expect(page).toHaveURL(/\/executions\/[0-9a-f-]{36}$/);
  const id = page.url().split("/").pop()!;
  const run = await db.selectFrom("WorkflowExecutions").select(["defName", "defVersion", "input"]).where("id", "=", id).executeTakeFirstOrThrow();
  expect(run).toEqual({ defName: name, defVersion: 1, input: { order: 42 } });
  // The sidecar runs it to the end.
  await expect
    .poll(async () => (await db.selectFrom("WorkflowExecutions").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status, { timeout: 15_000 })
    .toBe("COMPLETED");
});

/** The viewport's translation and zoom, and where the pane is on the page. */
async function viewport(page: Page) {
  return page.evaluate(() => {
    const pane = document.querySelector(".react-flow__pane")!.getBoundingClientRect();
    const m = new DOMMatrixReadOnly(getComputedStyle(document.querySelector(".react-flow__viewport")!).transform);
    return { left: pane.left, top: pane.top, x: m.e, y: m.f, zoom: m.a };
  });
}

/** Where a canvas point is on the page: below the overview zoom nodes are painted, not in the DOM, so a test finds them as a person does, by where they are drawn. */
async function onScreen(page: Page, point: { x: number; y: number }) {
  const v = await viewport(page);
  return { x: v.left + v.x + point.x * v.zoom, y: v.top + v.y + point.y * v.zoom };
}

test("zoomed far out, a big diagram is an overview whose nodes still select, drag and box-select", async ({ page }) => {
  const name = `e2e-overview-${uniqueSuffix()}`;
  await newWorkflow(page, name);
  // 240 no-ops in one chain, 20 to a row: fit view shows them at about zoom 0.1.
  const at = (i: number) => ({ x: (i % 20) * 300, y: Math.floor(i / 20) * 160 });
  const definition = {
    schemaVersion: 1,
    name,
    nodes: Array.from({ length: 240 }, (_, i) => ({ ref: `n_${i}`, type: "NOOP", position: at(i) })),
    edges: Array.from({ length: 239 }, (_, i) => ({ source: `n_${i}`, target: `n_${i + 1}` })),
  };
  await page.getByRole("tab", { name: "JSON" }).click();
  await page.getByRole("textbox", { name: "Definition JSON" }).click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(JSON.stringify(definition));
  await page.getByRole("tab", { name: "Diagram" }).click();
  await expect(node(page, "n_0")).toBeVisible();

  const fitView = async () => {
    await page.getByRole("button", { name: "Fit View", exact: true }).click();
    await expect(page.getByRole("img", { name: /^Diagram overview: 240 nodes/ })).toBeVisible();
    await expect(page.locator(".react-flow__node")).toHaveCount(0);
  };
  await fitView();
  const zoom = (await viewport(page)).zoom;
  expect(zoom).toBeLessThan(0.3);

  // A click on a painted node selects it and opens the inspector.
  const middle = (p: { x: number; y: number }) => ({ x: p.x + 110, y: p.y + 32 });
  const press = await onScreen(page, middle(at(45)));
  await page.mouse.click(press.x, press.y);
  await expect(page.locator('aside[aria-label="Inspector"][data-node-ref="n_45"]')).toBeVisible();

  // Dragged there, it moves by what the pointer travelled, in canvas units.
  await page.mouse.move(press.x, press.y);
  await page.mouse.down();
  await page.mouse.move(press.x + 60, press.y + 45, { steps: 6 });
  await page.mouse.move(press.x + 120, press.y + 90, { steps: 6 });
  await page.mouse.up();
  const moved = { x: at(45).x + 120 / zoom, y: at(45).y + 90 / zoom };
  const near = (a: { x: number; y: number }, b: { x: number; y: number }) => Math.abs(a.x - b.x) < 2 && Math.abs(a.y - b.y) < 2;

  // Zoomed back in over it: the DOM node is where the drag left it, still selected.
  const dropped = await onScreen(page, middle(moved));
  await page.mouse.move(dropped.x, dropped.y);
  for (let i = 0; i < 12 && (await viewport(page)).zoom < 0.6; i++) await page.mouse.wheel(0, -300);
  await expect(node(page, "n_45")).toHaveClass(/selected/);
  const translate = async (ref: string) => {
    const m = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec((await node(page, ref).getAttribute("style")) ?? "");
    return { x: Number(m?.[1]), y: Number(m?.[2]) };
  };
  expect(near(await translate("n_45"), moved)).toBe(true);

  // The whole drag is one undo step: one undo takes the node back off this part of the canvas, one redo returns it.
  await page.keyboard.press("Control+z");
  await expect(node(page, "n_45")).toHaveCount(0);
  await page.keyboard.press("Control+Shift+z");
  await expect(node(page, "n_45")).toBeVisible();
  expect(near(await translate("n_45"), moved)).toBe(true);

  // Far out again, Shift-drag a box around the first three nodes: they are selected (the side panel counts them).
  await fitView();
  const from = await onScreen(page, { x: -40, y: -40 });
  const to = await onScreen(page, { x: 2 * 300 + 260, y: 110 });
  await page.keyboard.down("Shift");
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 8 });
  await page.mouse.up();
  await page.keyboard.up("Shift");
  await expect(page.getByText("3 nodes selected")).toBeVisible();

  await save(page);
  const [v1] = await storedVersions(name);
  const nodes = (v1!.graph as WorkflowDefinition).nodes;
  expect(near(nodes.find((n) => n.ref === "n_45")!.position, moved)).toBe(true);
  expect(nodes.find((n) => n.ref === "n_44")!.position).toEqual(at(44));
});
