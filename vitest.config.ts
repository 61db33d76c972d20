import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["*.test.ts", "{engine,db,server,sdk,cli,bench,components,scripts}/**/*.test.{ts,tsx}"],
          exclude: ["**/*.int.test.ts", "node_modules/**"],
          environment: "node",
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["{db,server,sdk,cli,bench,scripts}/**/*.int.test.ts"],
          globalSetup: ["db/testing/global-setup.ts"],
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Each file gets its own cloned database; two cores run two files at once.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          // The fault suite (faults/): nf start as a user runs it, one fault at a time under load. After e2e in
          // npm test, so the web app build it starts from is already there.
          name: "faults",
          include: ["faults/**/*.fault.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
