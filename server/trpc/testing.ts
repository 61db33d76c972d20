import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import type { Db } from "@/db/pool";
import type { Principal } from "../auth/principal";
import { loadConfig } from "../lib/config";
import type { Config } from "../lib/config";
import { insertUser } from "../store/users";
import type { User } from "../store/users";
import { trustedContext } from "./context";
import { createCaller } from "./routers/_app";

/**
 * Helpers for tests that call procedures through `createCaller`: real users
 * in the test database, and principals for them without a sign-in round trip
 * (the sign-in path has its own tests).
 */

export function testConfig(databaseUrl: string): Config {
  return loadConfig({ DATABASE_URL: databaseUrl, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_ROLES: "api" });
}

/** Inserts a user with no password (these users never sign in by password). */
export async function insertTestUser(db: Db, email: string, options: { isOwner?: boolean } = {}): Promise<User> {
  return insertUser(db, { email, passwordHash: null, isOwner: options.isOwner ?? false });
}

/** The principal a session of `user` would resolve to (the session id is made up: nothing looks it up). */
export function userPrincipal(user: User): Principal & { kind: "user" } {
  return { kind: "user", userId: user.id, email: user.email, isOwner: user.isOwner, sessionId: randomUUID() };
}

/** A caller acting as `principal` (null: anonymous). */
export function callerAs(db: Db, databaseUrl: string, principal: Principal | null, resHeaders?: Headers) {
  return createCaller(trustedContext({ db, config: testConfig(databaseUrl), principal, resHeaders }));
}

const WEB_ENV_KEYS = ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_ROLES", "NODE_FLOW_METRICS_TOKEN", "NODE_FLOW_NOTIFICATIONS"] as const;

/**
 * Points the web process's context (server/web/web-context.ts, built from the
 * environment on first use) at a test database for the calling file, so route
 * handlers imported from app/ can be called directly; restores the
 * environment and closes that context's pool afterwards. Call at the top level
 * of a describe block, after `useTestDatabase()`.
 */
export function useWebEnvironment(database: { url: string }, extra: Record<string, string> = {}): void {
  const saved: Partial<Record<string, string | undefined>> = {};
  const holder = globalThis as typeof globalThis & { __nodeFlowWebContext?: { close(): Promise<void> } };
  const keys = [...new Set([...WEB_ENV_KEYS, ...Object.keys(extra)])];
  beforeAll(() => {
    for (const key of keys) saved[key] = process.env[key];
    for (const key of keys) delete process.env[key];
    Object.assign(process.env, { DATABASE_URL: database.url, NODE_FLOW_SECRET: "s".repeat(64), NODE_FLOW_ROLES: "api", NODE_FLOW_NOTIFICATIONS: "off", ...extra });
    delete holder.__nodeFlowWebContext;
  });
  afterAll(async () => {
    await holder.__nodeFlowWebContext?.close();
    delete holder.__nodeFlowWebContext;
    for (const key of keys) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });
}
