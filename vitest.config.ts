import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["*.test.ts", "{engine,db,server,sdk,cli,bench,components}/**/*.test.{ts,tsx}"],
          exclude: ["**/*.int.test.ts", "node_modules/**"],
          environment: "node",
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["{db,server,sdk,cli,bench}/**/*.int.test.ts"],
          globalSetup: ["db/testing/global-setup.ts"],
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Each file gets its own cloned database; two cores run two files at once.
          maxWorkers: 2,
        },
      },
    ],
  },
});
