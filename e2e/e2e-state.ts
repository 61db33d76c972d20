import { readFileSync } from "node:fs";
import path from "node:path";

/** What e2e/serve.ts tells the tests about the app it started. */
export interface E2eState {
  baseUrl: string;
  databaseUrl: string;
}

export const E2E_PORT = Number(process.env.E2E_PORT ?? 3917);

/** Per port, so two checkouts (or two ports) running e2e at once do not read each other's database. */
export function e2eStatePath(port: number = E2E_PORT): string {
  return path.join(process.cwd(), ".test-data", `e2e-${port}.json`);
}

export function readE2eState(port: number = E2E_PORT): E2eState {
  return JSON.parse(readFileSync(e2eStatePath(port), "utf8")) as E2eState;
}

/**
 * The owner's signed-in browser state, written once by owner-setup.setup.ts
 * and loaded by every spec (playwright.config.ts), so each test starts signed
 * in without paying for a sign-in. Per port, like the state file above.
 */
export function ownerStatePath(port: number = E2E_PORT): string {
  return path.join(process.cwd(), ".test-data", `e2e-${port}-owner-state.json`);
}
