/**
 * The sidecar: `node dist/server/sidecar/main.js` under `npm start` and in the
 * Docker image (compiled by scripts/build-runtime.ts), or from the source,
 * `node --import tsx server/sidecar/main.ts`.
 * Holds the background loops for NODE_FLOW_ROLES (default decider,poller); the
 * web process holds none. Refuses to start against a database whose schema is
 * not exactly this build's, because loops running old code against a new schema
 * (or the reverse) corrupt state quietly rather than fail loudly.
 */
import { assertDatabaseCapabilities, DatabaseCapabilityError } from "../../db/capabilities";
import { migrationStatus } from "../../db/migrator";
import { createDb } from "../../db/pool";
import type { Db } from "../../db/pool";
import { ConfigError, loadConfig } from "../lib/config";
import type { Config, Role } from "../lib/config";
import path from "node:path";
import { FilesystemBlobStore } from "../lib/blob-store";
import { checkDatabaseConnection, DatabaseConnectionError } from "../lib/database-connection";
import { createLogger } from "../lib/logger";
import type { Logger } from "../lib/logger";
import { startRunners, stopRunners } from "./runners";
import { countLeaseExpiries, observeEvaluation, processMetrics, recordRunnerPass } from "../lib/metrics";
import { configureTracing } from "../lib/tracing";
import type { RunTracer } from "../lib/tracing";
import { observeCommittedEvaluations } from "../evaluator/observe-evaluations";
import { startMetricsServer } from "./metrics-server";
import type { MetricsServer } from "./metrics-server";
import { Notifier } from "../lib/notifier";
import { listenForRunnerWakes } from "./runner-wakes";
import { createJqTransform } from "../sandbox/jq-transform";
import type { JqTransform } from "../sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../sandbox/quickjs-script-evaluator";
import { stopWhenSupervisorGone } from "../lib/supervisor-watch";
import { DEFAULT_WORKER_ROLES, resolveWorkerRoles } from "./worker-roles";
import { secretLookup, sealingKeysOf } from "../secrets/secrets";

/** An environment; NodeJS.ProcessEnv would demand the NODE_ENV that Next's types make required. */
type Env = Record<string, string | undefined>;

/** From SIGTERM to exit. Orchestrators SIGKILL after their own grace (Docker: 10 s), so stay under it. */
const SHUTDOWN_TIMEOUT_MS = 9_000;
/** Of that, how long the runners get to finish the pass in hand before the pool closes under them. */
const RUNNER_STOP_TIMEOUT_MS = 7_000;

class StartupError extends Error {
  override name = "StartupError";
}

function loadWorkerConfig(env: Env): { config: Config; roles: Role[] } {
  const problems: string[] = [];
  let config: Config | undefined;
  let roles: Role[] = [];
  try {
    config = loadConfig({ ...env, NODE_FLOW_ROLES: env.NODE_FLOW_ROLES ?? DEFAULT_WORKER_ROLES });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  try {
    roles = resolveWorkerRoles(env.NODE_FLOW_ROLES);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) if (!problems.includes(problem)) problems.push(problem);
  }
  if (problems.length > 0 || !config) throw new ConfigError(problems);
  return { config, roles };
}

async function assertSchemaMatchesBuild(db: Db, logger: Logger): Promise<void> {
  const status = await migrationStatus(db);
  if (status.unknown.length > 0) {
    throw new StartupError(
      `The database has migrations this build does not know (${status.unknown.join(", ")}): it was migrated by a newer node-flow. Run that version, or restore a matching database.`,
    );
  }
  if (status.pending.length > 0) {
    throw new StartupError(
      `The database is missing ${status.pending.length} migration${status.pending.length === 1 ? "" : "s"} (${status.pending.join(", ")}): run \`npm run migrate\` first.`,
    );
  }
  if (status.changed.length > 0) {
    logger.warn({ migrations: status.changed }, "applied migration files have changed since they were applied");
  }
}

async function main(): Promise<void> {
  let config: Config;
  let roles: Role[];
  try {
    ({ config, roles } = loadWorkerConfig(process.env));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  const logger = createLogger({ level: config.logLevel });
  const db = createDb(config.databaseUrl, { max: config.dbPoolSize, applicationName: "node-flow-worker", keyLookupsOnly: true });

  let stopping = false;
  let runners: ReturnType<typeof startRunners> = [];
  let scripts: QuickJsScriptEvaluator | undefined = undefined;
  let jq: JqTransform | undefined = undefined;
  let notifier: Notifier | undefined = undefined;
  let metricsServer: MetricsServer | undefined = undefined;
  let tracer: RunTracer | undefined = undefined;
  /** `cause`: the signal, or why the worker stops on its own. */
  const shutdown = async (cause: string) => {
    if (stopping) {
      logger.info({ cause }, "worker already stopping");
      return;
    }
    stopping = true;
    logger.info({ cause }, "worker stopping: finishing the batch in hand");
    // unref: once everything below has closed, the exit should not wait for this timer.
    setTimeout(() => {
      logger.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, "worker did not stop in time; forcing exit");
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    const finished = await stopRunners(runners, RUNNER_STOP_TIMEOUT_MS);
    // After the runners: the spans of their last evaluations go out too.
    await tracer?.shutdown().catch((error: unknown) => logger.warn({ err: error }, "exporting the last spans failed"));
    await notifier?.close().catch((error: unknown) => logger.warn({ err: error }, "closing the notifier failed"));
    await metricsServer?.close().catch((error: unknown) => logger.warn({ err: error }, "closing the metrics server failed"));
    await scripts?.close().catch((error: unknown) => logger.warn({ err: error }, "closing the script sandbox failed"));
    await jq?.close().catch((error: unknown) => logger.warn({ err: error }, "closing the jq sandbox failed"));
    await db.destroy().catch((error: unknown) => logger.warn({ err: error }, "closing the pool failed"));
    logger.info({ finished }, "worker stopped");
    process.exit(finished ? 0 : 1);
  };
  // Installed before the slow startup steps, so a stop during them still exits cleanly.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => void shutdown(signal));
  stopWhenSupervisorGone((reason) => void shutdown(`its supervisor is gone: ${reason}`));

  try {
    await checkDatabaseConnection(config.databaseUrl);
    await assertDatabaseCapabilities(db);
    await assertSchemaMatchesBuild(db, logger);
  } catch (error) {
    if (error instanceof DatabaseConnectionError || error instanceof DatabaseCapabilityError || error instanceof StartupError) {
      process.stderr.write(`${error.message}\n`);
      await db.destroy().catch(() => undefined);
      process.exit(1);
    }
    throw error;
  }
  if (stopping) return;

  // The decider runs SWITCH scripts and loop conditions, the poller INLINE
  // tasks (QuickJS) and JSON_JQ_TRANSFORM (jq); both read and write offloaded
  // payloads. A process holding neither skips booting the sandboxes.
  const deciding = roles.includes("decider");
  const polling = roles.includes("poller");
  scripts = deciding || polling ? await createQuickJsScriptEvaluator() : undefined;
  jq = polling ? await createJqTransform() : undefined;
  if (stopping) return;
  const metrics = processMetrics();
  metrics.configureLabels({ workflows: config.metricsWorkflows, tasks: config.metricsTasks });
  tracer = configureTracing(config.tracing, logger);
  const blobs = deciding || polling ? new FilesystemBlobStore({ root: path.join(config.dataDir, "blobs") }) : undefined;
  runners = startRunners(roles, {
    db,
    logger,
    scripts,
    jq,
    blobs,
    httpAllowPrivateNetworks: config.httpAllowPrivateNetworks,
    secrets: secretLookup(db, sealingKeysOf(config)),
    onPass: recordRunnerPass,
    onEvaluation: observeEvaluation,
    onCommitted: (evaluations) => observeCommittedEvaluations(evaluations, { metrics, tracer }),
    onLeaseExpiries: countLeaseExpiries,
  });
  if (config.notifications) {
    // An evaluation requested anywhere, or a system task queued, wakes its loop at once; the loops' intervals cover
    // whatever the notifier misses.
    notifier = listenForRunnerWakes(
      runners,
      (channels) => new Notifier({ connectionString: config.databaseUrl, applicationName: "node-flow-worker-notifier", logger, channels }),
    );
    void notifier?.start();
  }
  metricsServer = await startSidecarMetrics(config, db, logger);
  logger.info({ runners: runners.map((runner) => runner.name) }, `worker ready roles=${roles.join(",")}`);
}

/**
 * The sidecar's /metrics (runner passes, evaluations, lease expiries live in
 * this process). A port already taken — a second sidecar on one machine — is
 * logged and skipped: losing a scrape target must not stop the engine.
 */
async function startSidecarMetrics(config: Config, db: Db, logger: Logger): Promise<MetricsServer | undefined> {
  if (config.metricsPort === 0) return undefined;
  try {
    return await startMetricsServer({ port: config.metricsPort, host: config.host, db, logger, ...(config.metricsToken ? { token: config.metricsToken } : {}) });
  } catch (error) {
    logger.warn({ err: error, port: config.metricsPort }, "sidecar metrics not served: the port is unavailable (set NODE_FLOW_METRICS_PORT)");
    return undefined;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
