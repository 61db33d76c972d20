import { z } from "zod";

/**
 * Every environment variable node-flow reads, validated once at boot. Modules
 * take a `Config` (or the part they need) as an argument and never read
 * `process.env` themselves, so tests pass their own.
 */
export const ROLES = ["api", "decider", "poller"] as const;
export type Role = (typeof ROLES)[number];

export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** Parses NODE_FLOW_ROLES. An unknown role throws: a typo that dropped `decider` would start every workflow and progress none. */
export function parseRoles(value: string): Role[] {
  const parts = value.split(",").map((p) => p.trim()).filter(Boolean);
  const unknown = parts.filter((p) => !(ROLES as readonly string[]).includes(p));
  if (unknown.length > 0) {
    throw new ConfigError([
      `NODE_FLOW_ROLES has unknown role${unknown.length > 1 ? "s" : ""} ${unknown.map((u) => `"${u}"`).join(", ")}: use a comma-separated list of ${ROLES.join(", ")}.`,
    ]);
  }
  if (parts.length === 0) throw new ConfigError([`NODE_FLOW_ROLES is empty: use a comma-separated list of ${ROLES.join(", ")}.`]);
  return [...new Set(parts)] as Role[];
}

const envSchema = z.object({
  DATABASE_URL: z
    .string({ error: "DATABASE_URL is not set: set it to a Postgres 18 URL (postgres://user:pass@host:5432/db), or use `npm start`, which runs an embedded Postgres." })
    .refine((v) => /^postgres(ql)?:\/\//.test(v), "DATABASE_URL must start with postgres:// or postgresql://"),
  NODE_FLOW_SECRET: z
    .string({ error: "NODE_FLOW_SECRET is not set: set it to a random string of at least 32 characters (e.g. `openssl rand -hex 32`); it signs sessions and seals secrets." })
    .min(32, "NODE_FLOW_SECRET must be at least 32 characters (e.g. `openssl rand -hex 32`)"),
  // Instance secrets used before NODE_FLOW_SECRET, comma-separated: secrets sealed under them still open.
  NODE_FLOW_PREVIOUS_SECRETS: z.string().default(""),
  NODE_FLOW_ROLES: z.string().default("api,decider,poller"),
  PORT: z.coerce.number({ error: "PORT must be a number" }).int().min(1).max(65535).default(3000),
  HOST: z.string().min(1).default("0.0.0.0"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_FLOW_DATA_DIR: z.string().min(1).default(".data"),
  NODE_FLOW_DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  // Not z.coerce.boolean(): it reads "false" as true, and a setting that lets
  // HTTP tasks reach the metadata endpoint must mean exactly what it says.
  NODE_FLOW_HTTP_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"], { error: "NODE_FLOW_HTTP_ALLOW_PRIVATE must be true or false" })
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  NODE_FLOW_METRICS_PORT: z.coerce
    .number({ error: "NODE_FLOW_METRICS_PORT must be a number" })
    .int("NODE_FLOW_METRICS_PORT must be an integer")
    .min(0, "NODE_FLOW_METRICS_PORT must be 0 (off) to 65535")
    .max(65535, "NODE_FLOW_METRICS_PORT must be 0 (off) to 65535")
    .default(9464),
  NODE_FLOW_NOTIFICATIONS: z.enum(["on", "off"], { error: "NODE_FLOW_NOTIFICATIONS must be on or off" }).default("on"),
  NODE_FLOW_METRICS_TOKEN: z
    .string()
    .min(16, "NODE_FLOW_METRICS_TOKEN must be at least 16 characters (e.g. `openssl rand -hex 16`)")
    .optional(),
  NODE_FLOW_METRICS_WORKFLOWS: z.string().optional(),
  NODE_FLOW_METRICS_TASKS: z.string().optional(),
  // OpenTelemetry's own variables, read the way its SDKs read them; only the OTLP/HTTP exporter is offered.
  OTEL_TRACES_EXPORTER: z.enum(["none", "otlp"], { error: "OTEL_TRACES_EXPORTER must be none or otlp" }).default("none"),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (http://collector:4318)" }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/, error: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL (http://collector:4318/v1/traces)" })
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("node-flow"),
});

/** Where OTLP/HTTP goes when no endpoint is configured: a collector on this machine (the OTLP default). */
const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318";

export interface Config {
  databaseUrl: string;
  secret: string;
  /** Instance secrets used before `secret`: namespace secrets sealed under them still open (server/secrets/sealing.ts). */
  previousSecrets: string[];
  roles: Role[];
  port: number;
  host: string;
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  dataDir: string;
  dbPoolSize: number;
  /** HTTP tasks and webhooks may reach loopback, private and link-local addresses. */
  httpAllowPrivateNetworks: boolean;
  /** The sidecar's /metrics port; 0 serves none. */
  metricsPort: number;
  /** When set, /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /**
   * LISTEN/NOTIFY wake-ups (deciders, long-polls). Off, every waiter falls back
   * to its interval or timeout: slower, never wrong (invariant 7). For
   * poolers that cannot carry LISTEN (PgBouncer in transaction mode).
   */
  notifications: boolean;
  /**
   * Workflow and task names that get their own label on the workload metrics
   * (metrics.ts); `undefined`: the first ones a process sees, up to a bound.
   * Every other name is counted as "other", so a label never takes unbounded values.
   */
  metricsWorkflows: string[] | undefined;
  metricsTasks: string[] | undefined;
  /** Runs exported as traces over OTLP/HTTP (server/lib/tracing.ts), or undefined: tracing off (the default). */
  tracing: TracingConfig | undefined;
}

export interface TracingConfig {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  /** The `service.name` resource attribute. */
  serviceName: string;
}

/** A comma-separated list, or undefined when the variable is unset (an empty value is an empty list). */
function nameList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** Validates the environment; throws one ConfigError listing every problem at once. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const problems: string[] = [];
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join(".");
      problems.push(issue.message.startsWith(key) ? issue.message : `${key}: ${issue.message}`);
    }
  }
  let roles: Role[] = [];
  try {
    roles = parseRoles(env.NODE_FLOW_ROLES ?? "api,decider,poller");
  } catch (error) {
    problems.push(...(error as ConfigError).problems);
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    secret: e.NODE_FLOW_SECRET,
    previousSecrets: e.NODE_FLOW_PREVIOUS_SECRETS.split(",").map((s) => s.trim()).filter((s) => s !== ""),
    roles,
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    dataDir: e.NODE_FLOW_DATA_DIR,
    dbPoolSize: e.NODE_FLOW_DB_POOL_SIZE,
    httpAllowPrivateNetworks: e.NODE_FLOW_HTTP_ALLOW_PRIVATE,
    metricsPort: e.NODE_FLOW_METRICS_PORT,
    metricsToken: e.NODE_FLOW_METRICS_TOKEN,
    notifications: e.NODE_FLOW_NOTIFICATIONS === "on",
    metricsWorkflows: nameList(e.NODE_FLOW_METRICS_WORKFLOWS),
    metricsTasks: nameList(e.NODE_FLOW_METRICS_TASKS),
    tracing:
      e.OTEL_TRACES_EXPORTER === "otlp"
        ? {
            url: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, "")}/v1/traces`,
            serviceName: e.OTEL_SERVICE_NAME,
          }
        : undefined,
  };
}
