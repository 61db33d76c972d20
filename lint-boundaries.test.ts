import { ESLint } from "eslint";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";

// Proves the layer rule in eslint.config.mjs actually fires: each probe is linted
// as if it sat in that folder, and must be refused for the stated reason. The
// probes exist only in memory, so type-aware parsing (which needs files on disk)
// is switched off; the boundary rules do not need types.
const eslint = new ESLint({ cwd: import.meta.dirname, overrideConfig: [tseslint.configs.disableTypeChecked] });

async function restrictedMessages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => /no-restricted/.test(m.ruleId ?? ""))
    .map((m) => m.message);
}

describe("layer boundaries", () => {
  it("keeps engine/ free of I/O, database, framework, clock and randomness", async () => {
    const messages = await restrictedMessages(
      "engine/probe.ts",
      [
        'import { readFileSync } from "node:fs";',
        'import { sql } from "kysely";',
        'import { useState } from "react";',
        'import { json } from "../db/json";',
        "export const probe = [readFileSync, sql, useState, json, Date.now(), Math.random(), new Date()];",
      ].join("\n"),
    );
    expect(messages.join("\n")).toMatch(/no Node I\/O/);
    expect(messages.join("\n")).toMatch(/no database/);
    expect(messages.join("\n")).toMatch(/no framework/);
    expect(messages.join("\n")).toMatch(/bottom layer/);
    expect(messages.filter((m) => /no clock/.test(m))).toHaveLength(2);
    expect(messages.join("\n")).toMatch(/no randomness/);
  });

  it("keeps database drivers out of sdk/", async () => {
    const messages = await restrictedMessages("sdk/probe.ts", 'import pg from "pg";\nimport { createDb } from "@/db/pool";\nexport const p = [pg, createDb];');
    expect(messages).toHaveLength(2);
  });

  it("lets components/ import server types but not server code", async () => {
    const typeOnly = await restrictedMessages("components/probe.tsx", 'import type { Config } from "@/server/lib/config";\nexport type P = Config;');
    expect(typeOnly).toEqual([]);
    const runtime = await restrictedMessages("components/probe.tsx", 'import { loadConfig } from "@/server/lib/config";\nexport const p = loadConfig;');
    expect(runtime).toHaveLength(1);
  });

  it("keeps db/ below server/", async () => {
    const messages = await restrictedMessages("db/probe.ts", 'import { loadConfig } from "../server/config";\nexport const p = loadConfig;');
    expect(messages).toHaveLength(1);
  });
});
