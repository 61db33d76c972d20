import { describe, expect, it } from "vitest";
import { MAX_POLL_DELAY_SECONDS, pollDelaySeconds, runHttpPollTask } from "./http-poll-task";
import { jdbcConnectionSecretName, runJdbcTask, toPostgresPlaceholders } from "./jdbc-task";

const noScripts = { evaluate: () => ({ ok: true as const, value: true }) };

describe("HTTP_POLL delays", () => {
  it("spaces polls by strategy: FIXED, LINEAR_BACKOFF × n, EXPONENTIAL_BACKOFF × 2ⁿ⁻¹, capped at a day", () => {
    expect([1, 2, 3, 4].map((n) => pollDelaySeconds("FIXED", 10, n))).toEqual([10, 10, 10, 10]);
    expect([1, 2, 3, 4].map((n) => pollDelaySeconds("LINEAR_BACKOFF", 10, n))).toEqual([10, 20, 30, 40]);
    expect([1, 2, 3, 4].map((n) => pollDelaySeconds("EXPONENTIAL_BACKOFF", 10, n))).toEqual([10, 20, 40, 80]);
    expect(pollDelaySeconds("EXPONENTIAL_BACKOFF", 60, 500)).toBe(MAX_POLL_DELAY_SECONDS);
    expect(pollDelaySeconds(undefined, 5, 3)).toBe(5);
  });

  it("refuses a request it cannot poll before sending anything", async () => {
    const http = { allowPrivateNetworks: false };
    const run = (request: unknown) => runHttpPollTask({ http_request: request }, { pollCount: 1, scripts: noScripts, http });
    expect(await run(undefined)).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "HTTP_POLL task: the input has no http_request object" });
    expect(await run({ uri: "https://example.com" })).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "HTTP_POLL task: http_request.terminationCondition is missing" });
    expect(await run({ uri: "https://example.com", terminationCondition: "true", pollingInterval: 0 })).toMatchObject({ reason: expect.stringMatching(/pollingInterval must be/) as unknown });
    expect(await run({ uri: "https://example.com", terminationCondition: "true", pollingStrategy: "RANDOM" })).toMatchObject({ reason: expect.stringMatching(/pollingStrategy "RANDOM" is not FIXED/) as unknown });
  });
});

describe("JDBC statements", () => {
  it("turns ? into $n, leaving quoted text, identifiers, dollar quotes and comments alone", () => {
    expect(toPostgresPlaceholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?)")).toEqual({ text: "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)", count: 3 });
    expect(toPostgresPlaceholders(`SELECT '?', 'it''s ?', "odd?col", $$ ? $$, $q$?$q$ -- what?\n, ? /* ? */`)).toEqual({
      text: `SELECT '?', 'it''s ?', "odd?col", $$ ? $$, $q$?$q$ -- what?\n, $1 /* ? */`,
      count: 1,
    });
  });

  it("names a connection's secret from its id", () => {
    expect(jdbcConnectionSecretName("orders-db")).toBe("JDBC_ORDERS_DB");
    expect(jdbcConnectionSecretName("mysql.prod 2")).toBe("JDBC_MYSQL_PROD_2");
  });

  it("refuses what it cannot run before opening a connection, saying what is wrong", async () => {
    const secrets = () => Promise.resolve("postgres://u:p@127.0.0.1:1/db");
    const run = (input: Record<string, unknown>) => runJdbcTask("ns", input, { secrets });
    expect(await run({ statement: "SELECT 1" })).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reason: "JDBC task: the input names no connectionId (or integrationName)" });
    expect(await run({ connectionId: "a", statement: "SELECT 1", type: "MERGE" })).toMatchObject({ reason: 'JDBC task: type "MERGE" is not SELECT or UPDATE' });
    expect(await run({ connectionId: "a", statement: "SELECT ?", parameters: [] })).toMatchObject({ reason: "JDBC task: the statement has 1 ? placeholder and parameters has 0 values" });
    expect(await run({ connectionId: "a", statement: "SELECT 1", parameters: "x" })).toMatchObject({ reason: "JDBC task: parameters must be a list of values for the ? placeholders" });
    expect(await runJdbcTask("ns", { connectionId: "a", statement: "SELECT 1" }, { secrets: () => Promise.resolve("mysql://h/db") })).toMatchObject({
      reason: "JDBC task: the secret JDBC_A is not a postgres:// URL; node-flow's JDBC task speaks Postgres only",
    });
  });
});
