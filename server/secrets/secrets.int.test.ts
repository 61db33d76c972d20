import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { keyPair, startConductorHarness } from "../conductor/testing/conductor-harness";
import type { ConductorHarness } from "../conductor/testing/conductor-harness";
import { createTestKey, createTestNamespace, startRestHarness } from "../rest/testing/rest-fixtures";
import type { RestHarness, TestNamespace } from "../rest/testing/rest-fixtures";
import { MAX_SECRET_BYTES, sealingKeysOf, secretLookup } from "./secrets";

/**
 * Secrets through REST and Conductor's /api/secrets over real HTTP: values go
 * in and never come out — not in an answer, not in the audit log, not in
 * the row as plaintext — and what uses them (secretLookup) opens them.
 */

const t = useTestDatabase();
let rest: RestHarness;
let conductor: ConductorHarness;
let ns: TestNamespace;
let adminKey: string;
let readKey: string;
let token: string;
const VALUE = "sk_live_51HqZ-very-secret";

beforeAll(async () => {
  rest = await startRestHarness(t.db, t.url);
  conductor = await startConductorHarness(t.db, t.url);
  ns = await createTestNamespace(t.db, "vault");
  adminKey = await createTestKey(t.db, ns, ["admin"]);
  readKey = await createTestKey(t.db, ns, ["worker"]);
  token = (await conductor.call<{ token: string }>("POST", "/token", { body: keyPair(adminKey) })).body.token;
});
afterAll(async () => {
  await rest?.close();
  await conductor?.close();
});

const api = (method: string, path: string, body?: unknown, key = adminKey) => rest.api(method, `/ns/${ns.name}${path}`, { key, body });

async function everything(): Promise<string> {
  const tables = ["Secrets", "AuditEvents"];
  const parts = await Promise.all(tables.map((table) => sql<{ t: string | null }>`SELECT string_agg(row_to_json(x)::text, ' ') AS t FROM ${sql.table(table)} x`.execute(t.db)));
  return parts.map((p) => p.rows[0]?.t ?? "").join("\n");
}

describe("secrets over REST", () => {
  it("stores a value that no answer, audit row or stored row shows, and that the lookup opens", async () => {
    const created = await api("PUT", "/secrets/STRIPE_KEY", { value: VALUE, description: "payments" });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain(VALUE);
    const list = await api("GET", "/secrets");
    expect((list.body as { items: { name: string }[] }).items.map((s) => s.name)).toEqual(["STRIPE_KEY"]);
    expect(JSON.stringify(list.body)).not.toContain(VALUE);
    expect(JSON.stringify((await api("GET", "/secrets/STRIPE_KEY")).body)).not.toContain(VALUE);
    expect(await everything()).not.toContain(VALUE);
    expect(await secretLookup(t.db, rest.deps.sealingKeys)(ns.id, "STRIPE_KEY")).toBe(VALUE);
  });

  it("refuses an odd name or a value over the limit, naming the field, and writes nothing", async () => {
    const before = await t.db.selectFrom("Secrets").select("name").execute();
    const badName = await api("PUT", "/secrets/has-dash", { value: "x" });
    expect(badName.status).toBe(400);
    expect((badName.body as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toEqual(["/params/name"]);
    const big = await api("PUT", "/secrets/BIG", { value: "x".repeat(MAX_SECRET_BYTES + 1) });
    expect(big.status).toBe(400);
    expect((big.body as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toEqual(["/body/value"]);
    expect(await t.db.selectFrom("Secrets").select("name").execute()).toEqual(before);
  });

  it("lets only an admin change secrets", async () => {
    expect((await api("PUT", "/secrets/OTHER", { value: "x" }, readKey)).status).toBe(403);
    expect((await api("DELETE", "/secrets/STRIPE_KEY", undefined, readKey)).status).toBe(403);
  });
});

describe("Conductor's /api/secrets", () => {
  it("puts a value given as the body, says it exists, lists names, refuses to read it back, deletes it", async () => {
    expect((await conductor.call("PUT", "/secrets/GITHUB_TOKEN", { token, rawBody: JSON.stringify("ghp_secret_value"), headers: { "content-type": "application/json" } })).status).toBe(200);
    expect((await conductor.call("GET", "/secrets/GITHUB_TOKEN/exists", { token })).body).toBe(true);
    expect((await conductor.call("GET", "/secrets/NOPE/exists", { token })).body).toBe(false);
    expect((await conductor.call<string[]>("GET", "/secrets", { token })).body).toEqual(["GITHUB_TOKEN", "STRIPE_KEY"]);
    expect((await conductor.call<string[]>("POST", "/secrets", { token })).body).toEqual(["GITHUB_TOKEN", "STRIPE_KEY"]);
    const read = await conductor.call<{ message: string }>("GET", "/secrets/GITHUB_TOKEN", { token });
    expect(read.status).toBe(403);
    expect(JSON.stringify(read.body)).not.toContain("ghp_secret_value");
    // The Conductor harness runs under its own instance secret.
    expect(await secretLookup(t.db, sealingKeysOf({ secret: conductor.deps.secret, previousSecrets: [] }))(ns.id, "GITHUB_TOKEN")).toBe("ghp_secret_value");
    expect((await conductor.call("DELETE", "/secrets/GITHUB_TOKEN", { token })).status).toBe(200);
    expect((await conductor.call("DELETE", "/secrets/GITHUB_TOKEN", { token })).status).toBe(404);
    expect(await everything()).not.toContain("ghp_secret_value");
  });
});
