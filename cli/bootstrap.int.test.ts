import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEmptyDatabase, useTestDatabase } from "../db/testing/test-database";
import { authenticateApiKey } from "../server/auth/api-keys";
import { authorizeNamespace } from "../server/auth/authorize";
import { signIn } from "../server/auth/sign-in";

/**
 * `nf bootstrap` run for real, as automation would: the key alone on stdout,
 * a refusal as one line on stderr with exit 1 and nothing created.
 */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const scratch = mkdtempSync(path.join(tmpdir(), "nf-bootstrap-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PASSWORD = "tulip-harbour-9-lantern";
const KEY = /^nf_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

function nf(args: string[], extra: Record<string, string>): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_FLOW_DATA_DIR: path.join(scratch, "data") };
  for (const key of ["DATABASE_URL", "NODE_FLOW_SECRET", "NODE_FLOW_OWNER_EMAIL", "NODE_FLOW_OWNER_PASSWORD"]) delete env[key];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "cli/nf.ts", "bootstrap", ...args], { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const database = useTestDatabase();

describe("nf bootstrap", () => {
  it("refuses a weak password before touching the database, without echoing it", async () => {
    const run = await nf(["--email", "ops@example.com"], { DATABASE_URL: database.url, NODE_FLOW_OWNER_PASSWORD: "password1234" });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("The password is too common.");
    expect(run.stdout).toBe("");
    expect(run.stdout + run.stderr).not.toContain("password1234");
    expect(await database.db.selectFrom("Users").select("id").execute()).toEqual([]);
  });

  it("refuses a missing email with the usage text and the usage exit code", async () => {
    const run = await nf([], { DATABASE_URL: database.url, NODE_FLOW_OWNER_PASSWORD: PASSWORD });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("bootstrap needs the owner's email");
    expect(run.stderr).toContain("nf bootstrap [--email E]");
  });

  it("creates the owner and an admin key for default, printing only the key on stdout", async () => {
    const run = await nf([], { DATABASE_URL: database.url, NODE_FLOW_OWNER_EMAIL: "ops@example.com", NODE_FLOW_OWNER_PASSWORD: PASSWORD });
    expect(run.stderr).toContain("Created the owner ops@example.com.");
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(KEY);
    expect(run.stdout).toBe(`${key}\n`);
    expect(run.stderr).not.toContain(key);
    expect(run.stdout + run.stderr).not.toContain(PASSWORD);

    const principal = await authenticateApiKey(database.db, key);
    expect(principal).toMatchObject({ kind: "apiKey", scopes: ["admin"] });
    if (!principal) throw new Error("unreachable");
    expect(await authorizeNamespace(database.db, principal, "default", "admin")).toMatchObject({ ok: true, role: "admin" });
    // Stored hashed: the key's secret appears nowhere in the table. All of it after "nf_<prefix>_": the secret is
    // base64url, so it may hold "_" itself, and a split on "_" then checked a fragment that could be a single letter.
    expect(JSON.stringify(await database.db.selectFrom("ApiKeys").selectAll().execute())).not.toContain(key.slice(`nf_${key.slice(3, 15)}_`.length));

    const signedIn = await signIn(database.db, { email: "ops@example.com", password: PASSWORD });
    expect(signedIn.ok && signedIn.user.isOwner).toBe(true);
  });

  it("refuses to run again, creating nothing; --api-key-only mints just another key", async () => {
    const keysBefore = await database.db.selectFrom("ApiKeys").select("id").execute();
    const again = await nf(["--email", "other@example.com", "--password", PASSWORD], { DATABASE_URL: database.url });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toMatch(/already has an owner, so nothing was created.*--api-key-only/);
    expect(await database.db.selectFrom("ApiKeys").select("id").execute()).toHaveLength(keysBefore.length);
    expect(await database.db.selectFrom("Users").select("email").execute()).toEqual([{ email: "ops@example.com" }]);

    const keyOnly = await nf(["--api-key-only", "--key-name", "ci"], { DATABASE_URL: database.url });
    expect(keyOnly.code).toBe(0);
    expect(keyOnly.stdout.trim()).toMatch(KEY);
    const keys = await database.db.selectFrom("ApiKeys").select(["name", "scopes", "createdBy"]).orderBy("createdAt").execute();
    expect(keys).toEqual([
      { name: "bootstrap", scopes: ["admin"], createdBy: "nf bootstrap" },
      { name: "ci", scopes: ["admin"], createdBy: "nf bootstrap" },
    ]);
  });

  it("refuses a namespace that does not exist", async () => {
    const run = await nf(["--api-key-only", "--namespace", "nope"], { DATABASE_URL: database.url });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n").at(-1)).toBe('There is no namespace "nope".');
  });

  it("migrates an empty database first, as nf start would", async () => {
    const empty = await createEmptyDatabase();
    try {
      const run = await nf(["--email", "fresh@example.com"], { DATABASE_URL: empty.url, NODE_FLOW_OWNER_PASSWORD: PASSWORD });
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/applied 0008_identity/);
      expect(run.stdout.trim()).toMatch(KEY);
    } finally {
      await empty.drop();
    }
  });
});
