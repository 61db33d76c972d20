import net from "node:net";
import { describe, expect, it } from "vitest";
import { checkDatabaseConnection, databaseLocation, describeConnectionFailure, redactDatabaseUrl } from "./database-connection";

const URL_WITH_PASSWORD = "postgres://alice:hunter2@db.example:6543/flows";

describe("describeConnectionFailure", () => {
  it.each([
    [{ code: "ECONNREFUSED", message: "connect ECONNREFUSED 10.0.0.1:6543" }, /^Cannot connect to the database at db\.example:6543 \(ECONNREFUSED.*: check DATABASE_URL\.$/],
    [{ code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND db.example" }, /ENOTFOUND: the host name "db\.example" does not resolve/],
    [{ code: "28P01", message: 'password authentication failed for user "alice"' }, /rejected the password for user "alice" \(28P01\)/],
    [{ code: "3D000", message: 'database "flows" does not exist' }, /The database "flows" does not exist on db\.example:6543/],
    [{ message: "timeout expired" }, /\(timed out\)/],
  ])("describes %j in one line", (error, expected) => {
    const line = describeConnectionFailure(error, URL_WITH_PASSWORD);
    expect(line).toMatch(expected);
    expect(line).not.toContain("\n");
    expect(line).not.toContain("hunter2");
  });

  it("finds the code inside an AggregateError (localhost tries ::1 and 127.0.0.1)", () => {
    const error = Object.assign(new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })], ""), {});
    expect(describeConnectionFailure(error, "postgres://u:p@localhost:1/db")).toContain("(ECONNREFUSED");
  });

  it("scrubs the password from an unexpected driver message", () => {
    const line = describeConnectionFailure({ code: "XX000", message: `bad thing with ${URL_WITH_PASSWORD} and hunter2` }, URL_WITH_PASSWORD);
    expect(line).not.toContain("hunter2");
    expect(line).toContain("alice:***@");
  });

  it("appends the fix it is given", () => {
    expect(describeConnectionFailure({ code: "ECONNREFUSED" }, URL_WITH_PASSWORD, "restart it")).toMatch(/: restart it\.$/);
  });
});

describe("databaseLocation / redactDatabaseUrl", () => {
  it("names host, port, database and user, never the password", () => {
    expect(databaseLocation(URL_WITH_PASSWORD)).toEqual({ host: "db.example", port: "6543", database: "flows", user: "alice" });
    expect(databaseLocation("postgres://bob@h")).toEqual({ host: "h", port: "5432", database: "bob", user: "bob" });
    expect(redactDatabaseUrl(URL_WITH_PASSWORD)).toBe("postgres://alice:***@db.example:6543/flows");
  });
});

describe("checkDatabaseConnection", () => {
  it("fails fast and clearly on a closed port", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    await expect(checkDatabaseConnection(`postgres://u:secretpw@127.0.0.1:${port}/x`)).rejects.toThrow(
      `Cannot connect to the database at 127.0.0.1:${port} (ECONNREFUSED: nothing is listening there): check DATABASE_URL.`,
    );
  });
});
