import { expect, test } from "@playwright/test";
import type { Browser, BrowserContext } from "@playwright/test";
import type { Db } from "../db/pool";
import { OWNER, SIGNED_OUT, openE2eDb, signInThroughUi, uniqueSuffix } from "./identity";

let db: Db;

test.beforeAll(() => {
  db = openE2eDb();
});

test.afterAll(async () => {
  await db.destroy();
});

async function ownerId(): Promise<string> {
  return (await db.selectFrom("Users").select("id").where("email", "=", OWNER.email).executeTakeFirstOrThrow()).id;
}

async function sessionCount(userId: string): Promise<number> {
  const { count } = await db
    .selectFrom("Sessions")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("userId", "=", userId)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** A second browser, signed out, for acting as somebody else beside the owner's page. */
async function signedOutContext(browser: Browser, baseURL: string | undefined): Promise<BrowserContext> {
  return browser.newContext({ baseURL, storageState: SIGNED_OUT, viewport: { width: 1280, height: 800 } });
}

test.describe("signed out", () => {
  test.use({ storageState: SIGNED_OUT });

  test("a console page sends a visitor to sign in, and signing in returns them there", async ({ page }) => {
    await page.goto("/settings/namespaces");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fsettings%2Fnamespaces$/);
    await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();
    // Nothing of the console is shown to a visitor.
    await expect(page.getByRole("navigation", { name: "Main" })).toHaveCount(0);

    await page.getByRole("textbox", { name: "Email" }).fill(OWNER.email);
    await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/settings\/namespaces$/);
    await expect(page.getByRole("heading", { level: 1, name: "Namespaces" })).toBeVisible();
  });

  test("a wrong password is refused with a message, and nobody is signed in", async ({ page }) => {
    const owner = await ownerId();
    const sessionsBefore = await sessionCount(owner);

    await page.goto("/sign-in");
    await page.getByRole("textbox", { name: "Email" }).fill(OWNER.email);
    await page.getByLabel("Password", { exact: true }).fill("not the owner password");
    await page.getByRole("button", { name: "Sign in" }).click();

    const alert = page.getByRole("alert").filter({ hasText: "Wrong email or password." });
    await expect(alert).toBeVisible();
    await expect(alert).toContainText("You were not signed in");
    await expect(page).toHaveURL(/\/sign-in$/);
    expect((await page.context().cookies()).some((c) => c.name === "nf_session")).toBe(false);
    expect(await sessionCount(owner)).toBe(sessionsBefore);
    // The failure was counted against the address (sign-ins are slowed after several).
    const throttle = await db.selectFrom("SignInThrottles").select("failures").where("email", "=", OWNER.email).executeTakeFirst();
    expect(throttle?.failures).toBeGreaterThanOrEqual(1);

    // The right password still works afterwards, and clears the count.
    await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
  });

  test("signing out ends the session on the server; the console then sends the visitor to sign in", async ({ page }) => {
    const owner = await ownerId();
    // Its own session, not the shared one every other spec uses.
    await signInThroughUi(page, OWNER);
    const cookie = (await page.context().cookies()).find((c) => c.name === "nf_session");
    expect(cookie).toBeDefined();
    const sessionsSignedIn = await sessionCount(owner);

    await page.getByRole("button", { name: `Account: ${OWNER.displayName}` }).click();
    await page.getByRole("menuitem", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/sign-in$/);
    expect(await sessionCount(owner)).toBe(sessionsSignedIn - 1);

    await page.goto("/workflows");
    await expect(page).toHaveURL(/\/sign-in$/);

    // The old cookie, put back by hand, is dead: the server no longer knows the session.
    if (cookie) await page.context().addCookies([cookie]);
    await page.goto("/executions");
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fexecutions$/);
    const anonymous = await page.request.post("/api/trpc/auth.signOut", { headers: { origin: new URL(page.url()).origin }, data: {} });
    expect(anonymous.status()).toBe(401);
  });
});

test("an owner adds a user and makes them operator of a new namespace; that user sees only that namespace", async ({ page, browser, baseURL }) => {
  test.slow();
  const suffix = uniqueSuffix();
  const user = { email: `grace.${suffix}@e2e.example`, displayName: `Grace ${suffix}`, password: "compiler cobol nanosecond 1906" };
  const namespace = `e2e-ops-${suffix}`;

  // Settings → Users: add the user with an initial password.
  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Users" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Users" })).toBeVisible();
  await page.getByRole("button", { name: "Add user" }).click();
  const addUser = page.getByRole("dialog", { name: "Add a user" });
  await addUser.getByRole("textbox", { name: "Email" }).fill(user.email);
  await addUser.getByRole("textbox", { name: "Display name" }).fill(user.displayName);
  await addUser.getByLabel("Initial password", { exact: true }).fill(user.password);
  await addUser.getByRole("button", { name: "Add user" }).click();
  await expect(addUser).toBeHidden();
  await expect(page.getByText(`${user.email} can now sign in`)).toBeVisible();
  await expect(page.getByRole("grid", { name: "Users" }).getByRole("row").filter({ hasText: user.displayName })).toHaveCount(1);

  const created = await db.selectFrom("Users").select(["id", "isAdmin", "passwordHash", "disabledAt"]).where("email", "=", user.email).executeTakeFirstOrThrow();
  expect(created.isAdmin).toBe(false);
  expect(created.disabledAt).toBeNull();
  expect(created.passwordHash).toMatch(/^\$scrypt\$/);

  // Settings → Namespaces: create one; the page moves on to its members.
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Namespaces" }).click();
  await page.getByRole("button", { name: "Create namespace" }).click();
  const createNamespace = page.getByRole("dialog", { name: "Create a namespace" });
  await createNamespace.getByRole("textbox", { name: "Name" }).fill(namespace);
  await createNamespace.getByRole("textbox", { name: "Description" }).fill("Operators of the e2e suite");
  await createNamespace.getByRole("button", { name: "Create namespace" }).click();
  await expect(page).toHaveURL(new RegExp(`/settings/namespaces/${namespace}$`));
  await expect(page.getByRole("heading", { level: 1, name: namespace })).toBeVisible();

  // An unknown email is refused next to the field.
  const addMember = page.getByRole("form", { name: "Add a member" });
  await addMember.getByRole("textbox", { name: "Email" }).fill(`nobody.${suffix}@e2e.example`);
  await addMember.getByRole("button", { name: "Add member" }).click();
  await expect(addMember.getByText(`No user has the email nobody.${suffix}@e2e.example`)).toBeVisible();

  await addMember.getByRole("textbox", { name: "Email" }).fill(user.email);
  await addMember.getByRole("button", { name: "Role" }).click();
  await page.getByRole("option", { name: /^Operator/ }).click();
  await addMember.getByRole("button", { name: "Add member" }).click();
  const members = page.getByRole("grid", { name: `Members of ${namespace}` });
  await expect(members.getByRole("row").filter({ hasText: user.email })).toHaveCount(1);

  const membership = await db
    .selectFrom("NamespaceMembers as m")
    .innerJoin("Namespaces as n", "n.id", "m.namespaceId")
    .select(["m.role"])
    .where("n.name", "=", namespace)
    .where("m.userId", "=", created.id)
    .executeTakeFirstOrThrow();
  expect(membership.role).toBe("operator");

  // The owner switches the console to it; the choice outlives a reload.
  await page.goto("/workflows");
  await expect(page.getByText("Namespace: default")).toBeVisible();
  await page.getByRole("button", { name: /Namespace$/ }).click();
  await page.getByRole("listbox", { name: "Namespaces" }).getByRole("option", { name: new RegExp(`^${namespace}`) }).click();
  await expect(page.getByText(`Namespace: ${namespace}`)).toBeVisible();
  await expect(page.getByText(`namespace are listed here`)).toContainText(namespace);
  await page.reload();
  await expect(page.getByText(`Namespace: ${namespace}`)).toBeVisible();
  expect((await page.context().cookies()).find((c) => c.name === "nf_namespace")?.value).toBe(namespace);

  // The user, in a browser of their own, sees that namespace and no other.
  const theirs = await signedOutContext(browser, baseURL);
  try {
    const them = await theirs.newPage();
    await signInThroughUi(them, user);
    await expect(them.getByText(`Namespace: ${namespace}`)).toBeVisible();
    await expect(them.getByText("· operator")).toBeVisible();
    await expect(them.getByRole("heading", { name: "No workflows yet" })).toBeVisible();
    await them.getByRole("button", { name: /Namespace$/ }).click();
    const options = them.getByRole("listbox", { name: "Namespaces" }).getByRole("option");
    await expect(options).toHaveCount(1);
    await expect(options.first()).toContainText(namespace);
    await them.keyboard.press("Escape");

    // No user management for them, and the server agrees.
    await them.goto("/settings");
    await expect(them.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Users" })).toHaveCount(0);
    await them.goto("/settings/users");
    await expect(them.getByText("Only an owner manages users")).toBeVisible();

    // The owner disables them (after a confirmation); their next page is the sign-in page.
    await page.goto("/settings/users");
    await page.getByRole("button", { name: `Disable ${user.email}` }).click();
    const confirm = page.getByRole("alertdialog", { name: `Disable ${user.email}?` });
    await confirm.getByRole("button", { name: "Disable user" }).click();
    await expect(confirm).toBeHidden();
    await expect(page.getByRole("grid", { name: "Users" }).getByRole("row").filter({ hasText: user.displayName })).toContainText("Disabled");
    const disabled = await db.selectFrom("Users").select("disabledAt").where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(disabled.disabledAt).not.toBeNull();
    expect(await sessionCount(created.id)).toBe(0);

    await them.goto("/workflows");
    await expect(them).toHaveURL(/\/sign-in$/);
  } finally {
    await theirs.close();
  }
});

test("an admin creates a group with a role, adds and removes a member, and deletes it after confirming", async ({ page }) => {
  const name = `e2e on-call ${uniqueSuffix()}`;
  const owner = await ownerId();

  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Groups" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Groups" })).toBeVisible();
  await page.getByRole("button", { name: "Create group" }).first().click();
  const create = page.getByRole("dialog", { name: "Create a group" });
  await create.getByRole("textbox", { name: "Name" }).fill(name);
  // Viewer is checked to start with; operator is added (the checkbox's input is visually hidden behind its control).
  await create.getByText("Operator", { exact: true }).click();
  await create.getByRole("button", { name: "Create group" }).click();
  await expect(create).toBeHidden();

  const group = page.getByRole("listitem", { name, exact: true });
  await expect(group).toContainText("Viewer");
  await expect(group).toContainText("Operator");
  await group.getByRole("textbox", { name: `Email to add to ${name}` }).fill(OWNER.email);
  await group.getByRole("button", { name: "Add", exact: true }).click();
  await expect(group.getByRole("list", { name: `Members of ${name}` })).toContainText(OWNER.displayName);

  const stored = await db
    .selectFrom("Groups as g")
    .innerJoin("Namespaces as n", "n.id", "g.namespaceId")
    .select(["g.id", "g.roles", "n.name as namespace"])
    .where("g.name", "=", name)
    .executeTakeFirstOrThrow();
  expect(stored).toMatchObject({ roles: ["viewer", "operator"], namespace: "default" });
  const members = await db.selectFrom("GroupMembers").select("userId").where("groupId", "=", stored.id).execute();
  expect(members).toEqual([{ userId: owner }]);

  await group.getByRole("button", { name: `Remove ${OWNER.email} from ${name}` }).click();
  const confirmRemove = page.getByRole("alertdialog", { name: `Remove ${OWNER.email} from ${name}?` });
  await confirmRemove.getByRole("button", { name: "Remove from group" }).click();
  await expect(confirmRemove).toBeHidden();
  await expect(group).toContainText("0 members");
  expect(await db.selectFrom("GroupMembers").select("userId").where("groupId", "=", stored.id).execute()).toEqual([]);

  await group.getByRole("button", { name: `Delete ${name}` }).click();
  const confirmDelete = page.getByRole("alertdialog", { name: `Delete the group ${name}?` });
  // Cancelling deletes nothing.
  await confirmDelete.getByRole("button", { name: "Cancel" }).click();
  await expect(confirmDelete).toBeHidden();
  await expect(group).toBeVisible();
  await group.getByRole("button", { name: `Delete ${name}` }).click();
  await confirmDelete.getByRole("button", { name: "Delete group" }).click();
  await expect(group).toHaveCount(0);
  expect(await db.selectFrom("Groups").select("id").where("id", "=", stored.id).execute()).toEqual([]);
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  test("Settings → Users fits: sections scroll sideways, the table folds its columns", async ({ page }) => {
    await page.goto("/settings/users");
    await expect(page.getByRole("heading", { level: 1, name: "Users" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Users" })).toHaveAttribute("aria-current", "page");
    const row = page.getByRole("grid", { name: "Users" }).getByRole("row").filter({ hasText: OWNER.displayName });
    await expect(row).toContainText("(you)");
    // Nothing overflows the viewport sideways except the deliberately scrolling section strip.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: "Add user" }).click();
    await expect(page.getByRole("dialog", { name: "Add a user" }).getByRole("textbox", { name: "Email" })).toBeVisible();
  });
});
