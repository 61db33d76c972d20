import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  embeddedDatabaseUrl,
  EmbeddedDatabaseError,
  embeddedPaths,
  prepareEmbeddedState,
  readEmbeddedState,
  readOrCreateSecret,
  writeEmbeddedState,
} from "./embedded-database";
import type { EmbeddedPaths } from "./embedded-database";

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe("embedded database bookkeeping", () => {
  let root: string;
  let paths: EmbeddedPaths;

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "nf-embedded-"));
    // mkdtemp makes 0700; as root the postgres-user reachability check would (rightly) refuse it.
    chmodSync(root, 0o755);
    paths = embeddedPaths(path.join(root, ".data"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("lays the data directory out as documented", () => {
    expect(paths.postgresDir).toBe(path.join(root, ".data", "postgres"));
    expect(paths.stateFile).toBe(path.join(root, ".data", "embedded.json"));
    expect(paths.secretFile).toBe(path.join(root, ".data", "secret"));
  });

  it("creates the state once, 0600, with a password and no port yet, then reuses it", () => {
    const first = prepareEmbeddedState(paths);
    expect(first.created).toBe(true);
    expect(first.state.password).toMatch(/^[0-9a-f]{48}$/);
    expect(first.state.port).toBeNull();
    expect(modeOf(paths.stateFile)).toBe(0o600);

    const second = prepareEmbeddedState(paths);
    expect(second).toEqual({ state: first.state, created: false });
  });

  it("records the port it got and keeps 0600 when rewriting a looser file", () => {
    const { state } = prepareEmbeddedState(paths);
    chmodSync(paths.stateFile, 0o644);
    writeEmbeddedState(paths, { ...state, port: 54321 });
    expect(readEmbeddedState(paths)).toEqual({ ...state, port: 54321 });
    expect(modeOf(paths.stateFile)).toBe(0o600);
  });

  it("refuses a cluster whose state file is gone, naming both paths", () => {
    mkdirSync(paths.postgresDir, { recursive: true });
    writeFileSync(path.join(paths.postgresDir, "PG_VERSION"), "18\n");
    expect(() => prepareEmbeddedState(paths)).toThrow(EmbeddedDatabaseError);
    expect(() => prepareEmbeddedState(paths)).toThrow(/embedded\.json.*missing/);
  });

  it.each([
    ["not JSON", "{nope", /not valid JSON/],
    ["a foreign shape", JSON.stringify({ version: 2, password: "x", port: 1 }), /not a node-flow embedded database file/],
    ["a bad port", JSON.stringify({ version: 1, password: "x", port: 70000 }), /not a node-flow embedded database file/],
  ])("refuses a state file with %s", (_label, content, message) => {
    mkdirSync(paths.dataDir, { recursive: true });
    writeFileSync(paths.stateFile, content);
    expect(() => readEmbeddedState(paths)).toThrow(message);
  });

  it("generates the secret once (64 hex characters, 0600) and reuses it", () => {
    const first = readOrCreateSecret(paths);
    expect(first.created).toBe(true);
    expect(first.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(modeOf(paths.secretFile)).toBe(0o600);
    expect(readFileSync(paths.secretFile, "utf8")).toBe(`${first.secret}\n`);
    expect(readOrCreateSecret(paths)).toEqual({ secret: first.secret, created: false });
  });

  it("refuses a truncated secret file instead of silently replacing it", () => {
    mkdirSync(paths.dataDir, { recursive: true });
    writeFileSync(paths.secretFile, "short\n");
    expect(() => readOrCreateSecret(paths)).toThrow(/fewer than 32 characters/);
  });

  it("connects through the cluster's Unix socket, with the password URL-encoded, and the parsed string names the socket", () => {
    const url = embeddedDatabaseUrl(paths, "p@ss/word", 5433);
    expect(url).toBe(`postgres://postgres:p%40ss%2Fword@${encodeURIComponent(paths.postgresDir)}:5433/node_flow`);
    expect(new pg.Client({ connectionString: url })).toMatchObject({ host: paths.postgresDir, port: 5433, password: "p@ss/word", database: "node_flow" });
  });

  it("falls back to TCP on loopback when the socket's path would not fit in a socket address", () => {
    const deep = embeddedPaths(path.join(root, "d".repeat(90), ".data"));
    expect(embeddedDatabaseUrl(deep, "pw", 5433)).toBe("postgres://postgres:pw@127.0.0.1:5433/node_flow");
  });

  it.runIf(process.getuid?.() === 0)("as root, refuses a data directory the postgres user cannot reach", () => {
    chmodSync(root, 0o700);
    expect(() => prepareEmbeddedState(paths)).toThrow(new RegExp(`cannot enter ${root}.*chmod o\\+x`));
  });
});
