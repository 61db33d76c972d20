import { expect, test as setup } from "@playwright/test";
import { ownerStatePath } from "./e2e-state";
import { OWNER, openE2eDb } from "./identity";

/**
 * Runs before every spec (the `setup` project): on the fresh database that
 * e2e/serve.ts creates, the console opens on owner setup; creating the owner
 * signs them in and lands on Workflows. The browser state is saved for the
 * specs, which all start as this owner.
 */
setup("a fresh install opens owner setup; creating the owner signs in and lands on Workflows", async ({ page }) => {
  const db = openE2eDb();
  try {
    const { count } = await db.selectFrom("Users").select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow();
    expect(Number(count), "e2e/serve.ts starts every run on an empty database").toBe(0);

    // Any console page sends a visitor of a fresh install to setup.
    await page.goto("/settings");
    await expect(page).toHaveURL(/\/setup$/);
    await expect(page.getByRole("heading", { level: 1, name: "Set up the owner account" })).toBeVisible();

    await page.getByRole("textbox", { name: "Email" }).fill(OWNER.email);
    await page.getByRole("textbox", { name: "Display name" }).fill(OWNER.displayName);
    // A short password is hinted while typing and refused by the server, next to the field.
    await page.getByLabel("Password", { exact: true }).fill("short");
    await expect(page.getByText("7 more characters needed")).toBeVisible();
    await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
    await page.getByLabel("Confirm password").fill(`${OWNER.password}x`);
    await page.getByRole("button", { name: "Create owner and sign in" }).click();
    await expect(page.getByText("The two passwords differ.")).toBeVisible();
    await page.getByLabel("Confirm password").fill(OWNER.password);
    await page.getByRole("button", { name: "Create owner and sign in" }).click();

    await expect(page).toHaveURL(/\/workflows$/);
    await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
    await expect(page.getByRole("button", { name: `Account: ${OWNER.displayName}` })).toBeVisible();

    // What the form did, as the database has it: one owner, the password only as a scrypt hash, one live session.
    const users = await db.selectFrom("Users").select(["id", "email", "displayName", "isAdmin", "passwordHash"]).execute();
    expect(users).toHaveLength(1);
    const [owner] = users;
    expect(owner).toMatchObject({ email: OWNER.email, displayName: OWNER.displayName, isAdmin: true });
    expect(owner?.passwordHash).toMatch(/^\$scrypt\$/);
    expect(owner?.passwordHash).not.toContain(OWNER.password);
    const sessions = await db.selectFrom("Sessions").select(["tokenHash", "expiresAt"]).where("userId", "=", owner?.id ?? "").execute();
    expect(sessions).toHaveLength(1);
    const cookie = (await page.context().cookies()).find((c) => c.name === "nf_session");
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe("Lax");
    // Only the token's hash is stored, never the token the browser holds.
    expect(sessions[0]?.tokenHash).not.toBe(cookie?.value);

    // Setup is over: the page now leads on instead of offering a second owner.
    await page.goto("/setup");
    await expect(page).toHaveURL(/\/workflows$/);

    await page.context().storageState({ path: ownerStatePath() });
  } finally {
    await db.destroy();
  }
});
