import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "../../../db/pool";
import { FilesystemBlobStore } from "../../lib/blob-store";
import { Notifier, TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL } from "../../lib/notifier";
import { serveRequests } from "../../rest/testing/serve-rest";
import type { RestTestServer } from "../../rest/testing/serve-rest";
import { CONDUCTOR_ROUTES } from "../conductor-routes";
import type { ConductorDeps } from "../define-conductor-route";
import { CONDUCTOR_PREFIX, answerConductorRequest } from "../dispatch-conductor-request";

/**
 * The Conductor dispatcher behind a real node:http server, for integration
 * tests: real sockets, real Postgres, a real notifier. `call` is a plain
 * fetch, the way a Conductor client talks to the server — nothing of
 * node-flow's SDK.
 */

export const TEST_SECRET = "conductor-test-secret-".padEnd(64, "x");

export interface ConductorAnswerForTest<T = unknown> {
  status: number;
  contentType: string | null;
  /** Parsed JSON for an application/json answer, the text otherwise (undefined when empty). */
  body: T;
}

export interface ConductorHarness {
  deps: ConductorDeps;
  /** Where the blob store lives: share it with a sidecar as its NODE_FLOW_DATA_DIR. */
  dataDir: string;
  server: RestTestServer;
  /** http://127.0.0.1:<port>/conductor/api */
  baseUrl: string;
  call<T = unknown>(method: string, pathAndQuery: string, options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<ConductorAnswerForTest<T>>;
  close(): Promise<void>;
}

export async function startConductorHarness(db: Db, databaseUrl: string, options: { now?: () => number; tokenTtlSeconds?: number } = {}): Promise<ConductorHarness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "nf-conductor-"));
  const blobs = new FilesystemBlobStore({ root: path.join(dataDir, "blobs") });
  const notifier = new Notifier({ connectionString: databaseUrl, applicationName: "conductor-test-notifier", channels: [TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL] });
  await notifier.start();
  const deps: ConductorDeps = {
    db,
    blobs,
    notifier: () => notifier,
    secret: TEST_SECRET,
    logger: { info: () => undefined, warn: (obj, msg) => console.warn(msg, obj), error: (obj, msg) => console.error(msg, obj) },
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.tokenTtlSeconds === undefined ? {} : { tokenTtlSeconds: options.tokenTtlSeconds }),
  };
  const server = await serveRequests((request) => answerConductorRequest(deps, request, CONDUCTOR_ROUTES), CONDUCTOR_PREFIX);
  return {
    deps,
    dataDir,
    server,
    baseUrl: server.baseUrl,
    async call<T>(method: string, pathAndQuery: string, callOptions: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) {
      const headers: Record<string, string> = { ...callOptions.headers };
      if (callOptions.token !== undefined) headers["x-authorization"] = callOptions.token;
      let body: string | undefined = callOptions.rawBody;
      if (callOptions.body !== undefined) {
        headers["content-type"] ??= "application/json";
        body = JSON.stringify(callOptions.body);
      }
      const response = await fetch(`${server.baseUrl}${pathAndQuery}`, { method, headers, body });
      const text = await response.text();
      const contentType = response.headers.get("content-type");
      const parsed = contentType?.startsWith("application/json") === true && text !== "" ? (JSON.parse(text) as unknown) : text === "" ? undefined : text;
      return { status: response.status, contentType, body: parsed as T };
    },
    close: async () => {
      await server.close();
      await notifier.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The key id and secret of a node-flow API key `nf_<prefix>_<secret>`, as a Conductor client is configured with them. */
export function keyPair(key: string): { keyId: string; keySecret: string } {
  const match = /^nf_([0-9a-f]{12})_(.+)$/.exec(key);
  if (match === null) throw new Error(`not an API key: ${key}`);
  return { keyId: match[1]!, keySecret: match[2]! };
}
