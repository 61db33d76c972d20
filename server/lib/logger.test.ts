import { describe, expect, it } from "vitest";
import { createLogger, formatPrettyLine } from "./logger";

function capture(format: "pretty" | "json") {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", format, destination: { write: (line: string) => lines.push(line) } });
  return { logger, lines };
}

describe("createLogger", () => {
  it("redacts secrets, passwords, authorization and cookie fields at any of three depths", () => {
    const { logger, lines } = capture("json");
    logger.info(
      {
        password: "p1",
        secret: "s1",
        config: { databaseUrl: "postgres://u:p2@h/db", secret: "s2" },
        req: { headers: { authorization: "Bearer t", cookie: "sid=1", "set-cookie": "sid=2", accept: "*/*" } },
      },
      "hello",
    );
    const text = lines.join("");
    for (const leaked of ["p1", "s1", "p2", "s2", "Bearer t", "sid=1", "sid=2"]) expect(text).not.toContain(leaked);
    const entry = JSON.parse(lines[0] ?? "{}") as { req: { headers: { accept: string; authorization: string } }; msg: string };
    expect(entry.req.headers.accept).toBe("*/*");
    expect(entry.req.headers.authorization).toBe("[redacted]");
    expect(entry.msg).toBe("hello");
  });

  it("honours the level", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", destination: { write: (line: string) => lines.push(line) } });
    logger.info("quiet");
    logger.warn("loud");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("loud");
  });

  it("prints one readable line per entry in pretty mode, redaction included", () => {
    const { logger, lines } = capture("pretty");
    logger.info({ roles: ["decider", "poller"], token: "t0k", note: "two words" }, "worker ready roles=decider,poller");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}worker ready roles=decider,poller roles=\["decider","poller"\] token=\[redacted\] note="two words"\n$/,
    );
  });
});

describe("formatPrettyLine", () => {
  it("prints an error's message inline and its stack indented below", () => {
    const line = formatPrettyLine(
      JSON.stringify({ level: 50, time: 0, msg: "pass failed", err: { type: "Error", message: "boom", stack: "Error: boom\n    at a (x.ts:1)\n    at b (y.ts:2)" } }),
    );
    const [first, ...rest] = line.trimEnd().split("\n");
    expect(first).toMatch(/ERROR pass failed err=boom$/);
    expect(rest).toEqual(["    at a (x.ts:1)", "    at b (y.ts:2)"]);
  });

  it("passes a line that is not JSON through unchanged", () => {
    expect(formatPrettyLine("plain")).toBe("plain\n");
  });
});
