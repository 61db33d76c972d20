import { expect } from "@playwright/test";
import type { Page } from "@playwright/test";
import { createDb } from "../db/pool";
import type { Db } from "../db/pool";
import { readE2eState } from "./e2e-state";

/** The owner the setup project creates through /setup on the fresh e2e database. */
export const OWNER = {
  email: "olive.owner@e2e.example",
  displayName: "Olive Owner",
  password: "tidal basin lantern 47",
} as const;

/** For tests that must start signed out: a context with no cookies at all. */
export const SIGNED_OUT = { cookies: [], origins: [] };

/** The e2e database, for asserting what the UI did. */
export function openE2eDb(): Db {
  return createDb(readE2eState().databaseUrl, { max: 2, applicationName: "node-flow-e2e" });
}

/** Signs in through the form, as a person would, and waits for the console. */
export async function signInThroughUi(page: Page, credentials: { email: string; password: string }): Promise<void> {
  await page.goto("/sign-in");
  await page.getByRole("textbox", { name: "Email" }).fill(credentials.email);
  await page.getByLabel("Password", { exact: true }).fill(credentials.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
}

/** A suffix that keeps names unique across runs against one database. */
export function uniqueSuffix(): string {
  return Date.now().toString(36) + Math.floor(Math.random() * 1296).toString(36);
}
