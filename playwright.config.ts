import { defineConfig, devices } from "@playwright/test";
import { E2E_PORT, ownerStatePath } from "./e2e/e2e-state";

const baseURL = `http://127.0.0.1:${E2E_PORT}`;

const chromium = {
  ...devices["Desktop Chrome"],
  viewport: { width: 1280, height: 800 },
  // Debian's chromium; Playwright downloads no browser here.
  launchOptions: {
    executablePath: "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  },
};

/**
 * e2e against the real app on a real Postgres 18. The webServer builds the app
 * (`next build`), starts an embedded Postgres, migrates it and runs
 * `next start` (see e2e/serve.ts). Set E2E_SKIP_BUILD=1 to reuse .next.
 */
export default defineConfig({
  testDir: "./e2e",
  // The tests share one database, and one of them inserts rows others can see.
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  retries: process.env.CI ? 1 : 0,
  reporter: process.env.CI ? [["list"], ["html", { open: "never" }]] : "list",
  timeout: 30_000,
  expect: { timeout: 10_000 },
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    {
      // Creates the owner through /setup on the fresh database and saves the
      // signed-in state: one setup per run, instead of a sign-in per test.
      name: "setup",
      testMatch: /\.setup\.ts$/,
      use: chromium,
    },
    {
      name: "chromium",
      dependencies: ["setup"],
      use: { ...chromium, storageState: ownerStatePath() },
    },
  ],
  webServer: {
    // node itself, not npx or tsx's CLI: Playwright SIGKILLs the process group as
    // soon as the command it spawned exits, so the process that owns the
    // shutdown (e2e/serve.ts) must be that process.
    command: "node --import tsx e2e/serve.ts",
    // Ready answers 200 only once Postgres is up and fully migrated.
    url: `${baseURL}/api/health/ready`,
    reuseExistingServer: false,
    // next build (~30-60 s on two cores) plus Postgres init and start.
    timeout: 240_000,
    stdout: "ignore",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
  },
});
