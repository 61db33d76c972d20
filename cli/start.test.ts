import { describe, expect, it } from "vitest";
import { ConfigError } from "../server/lib/config";
import { UsageError } from "./help";
import { localAddress, parseStartArgs, planStart, readyBanner } from "./start";

const SECRET = "a".repeat(64);

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("parseStartArgs", () => {
  it("defaults to production on the configured port", () => {
    expect(parseStartArgs([])).toEqual({ dev: false, port: undefined });
  });

  it("reads --dev and --port", () => {
    expect(parseStartArgs(["--dev", "--port", "4100"])).toEqual({ dev: true, port: 4100 });
    expect(parseStartArgs(["--port=4200"])).toEqual({ dev: false, port: 4200 });
  });

  it.each([["--port", "abc"], ["--port", "0"], ["--port", "70000"], ["--port", "12.5"], ["--verbose"], ["extra"]])(
    "rejects %j",
    (...argv) => {
      expect(() => parseStartArgs(argv)).toThrow(UsageError);
    },
  );
});

describe("planStart", () => {
  it("uses the embedded database when DATABASE_URL is unset, without requiring a secret", () => {
    const plan = planStart({}, { dev: false, port: undefined });
    expect(plan.mode).toBe("embedded");
    expect(plan.workerRoles).toEqual(["decider", "poller"]);
    expect(plan.config.port).toBe(3000);
    expect(plan.mode === "embedded" && plan.secretFromEnv).toBeUndefined();
  });

  it("treats an empty DATABASE_URL as unset", () => {
    expect(planStart({ DATABASE_URL: "" }, { dev: false, port: undefined }).mode).toBe("embedded");
  });

  it("keeps a secret given in the environment in embedded mode", () => {
    const plan = planStart({ NODE_FLOW_SECRET: SECRET }, { dev: false, port: undefined });
    expect(plan.mode === "embedded" && plan.secretFromEnv).toBe(SECRET);
  });

  it("requires NODE_FLOW_SECRET when DATABASE_URL is set", () => {
    const problems = problemsOf(() => planStart({ DATABASE_URL: "postgres://u:p@db:5432/nf" }, { dev: false, port: undefined }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^NODE_FLOW_SECRET is not set/);
  });

  it("uses DATABASE_URL and the secret when both are set; --port overrides PORT", () => {
    const plan = planStart(
      { DATABASE_URL: "postgres://u:p@db:5432/nf", NODE_FLOW_SECRET: SECRET, PORT: "3001" },
      { dev: false, port: 4000 },
    );
    expect(plan.mode).toBe("external");
    expect(plan.config.databaseUrl).toBe("postgres://u:p@db:5432/nf");
    expect(plan.config.secret).toBe(SECRET);
    expect(plan.config.port).toBe(4000);
  });

  it("reports every problem at once, an unknown role only once", () => {
    const problems = problemsOf(() =>
      planStart({ DATABASE_URL: "mysql://x", NODE_FLOW_ROLES: "decider,bogus", PORT: "nope" }, { dev: false, port: undefined }),
    );
    expect(problems.filter((p) => p.includes("NODE_FLOW_ROLES"))).toHaveLength(1);
    expect(problems.some((p) => p.includes("DATABASE_URL"))).toBe(true);
    expect(problems.some((p) => p.includes("NODE_FLOW_SECRET"))).toBe(true);
    expect(problems.some((p) => p.includes("PORT"))).toBe(true);
  });

  it("refuses roles that leave the worker nothing to run", () => {
    const problems = problemsOf(() => planStart({ NODE_FLOW_ROLES: "api" }, { dev: false, port: undefined }));
    expect(problems).toEqual([expect.stringContaining("NODE_FLOW_ROLES=api leaves the worker nothing to run")]);
  });

  it("drops api from the worker's roles", () => {
    expect(planStart({ NODE_FLOW_ROLES: "api,poller" }, { dev: false, port: undefined }).workerRoles).toEqual(["poller"]);
  });
});

describe("localAddress", () => {
  it("probes loopback for a wildcard bind and prints localhost", () => {
    expect(localAddress("0.0.0.0")).toEqual({ probeHost: "127.0.0.1", displayHost: "localhost" });
    expect(localAddress("::")).toEqual({ probeHost: "127.0.0.1", displayHost: "localhost" });
  });

  it("uses a specific host as given", () => {
    expect(localAddress("127.0.0.1")).toEqual({ probeHost: "127.0.0.1", displayHost: "localhost" });
    expect(localAddress("10.1.2.3")).toEqual({ probeHost: "10.1.2.3", displayHost: "10.1.2.3" });
  });
});

describe("readyBanner", () => {
  it("points to /setup while no owner exists, and to the console after", () => {
    expect(readyBanner("http://localhost:3000", false)).toBe("node-flow is running: open http://localhost:3000/setup to create the owner account  (Ctrl-C stops it)");
    expect(readyBanner("http://localhost:3000", true)).toBe("node-flow is running at http://localhost:3000  (Ctrl-C stops it)");
  });
});
