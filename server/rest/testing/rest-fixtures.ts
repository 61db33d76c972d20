import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "../../../db/pool";
import { createApiKey } from "../../auth/api-keys";
import type { ApiKeyScope } from "../../auth/principal";
import { FilesystemBlobStore } from "../../lib/blob-store";
import type { BlobStore } from "../../lib/blob-store";
import { Notifier, TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL } from "../../lib/notifier";
import { sealingKeysOf } from "../../secrets/secrets";
import { insertNamespace } from "../../store/namespaces";
import type { RestDeps } from "../define-route";
import { serverAuth } from "../rest-deps";
import { serveRest } from "./serve-rest";
import type { RestTestServer } from "./serve-rest";

/** A namespace with an id and name, for tests. */
export interface TestNamespace {
  id: string;
  name: string;
}

export async function createTestNamespace(db: Db, label: string): Promise<TestNamespace> {
  const ns = await insertNamespace(db, { name: `${label}-${randomBytes(4).toString("hex")}` });
  return { id: ns.id, name: ns.name };
}

/** A fresh API key of `namespace` with `scopes`; returns the whole key. */
export async function createTestKey(db: Db, namespace: TestNamespace, scopes: ApiKeyScope[]): Promise<string> {
  const created = await createApiKey(db, { namespaceId: namespace.id, name: `test-${scopes.join("-")}-${randomBytes(3).toString("hex")}`, scopes, createdBy: "test" });
  return created.key;
}

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small client for tests: JSON in, JSON (or problem JSON) out. */
export function apiClient(baseUrl: string) {
  return async function call<T = Record<string, unknown>>(
    method: string,
    pathAndQuery: string,
    options: { key?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    const response = await fetch(`${baseUrl}${pathAndQuery}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
      signal: options.signal,
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: (text === "" ? undefined : JSON.parse(text)) as T };
  };
}

/** Everything an integration test of the REST API needs: deps, a blob directory, a notifier, a server. */
/** The instance secret the harness seals namespace secrets with: give it to a sidecar that must open them. */
export const TEST_INSTANCE_SECRET = "s".repeat(64);

export interface RestHarness {
  deps: RestDeps;
  blobs: BlobStore;
  notifier: Notifier;
  server: RestTestServer;
  api: ReturnType<typeof apiClient>;
  close(): Promise<void>;
}

export async function startRestHarness(db: Db, databaseUrl: string): Promise<RestHarness> {
  const blobRoot = await mkdtemp(path.join(tmpdir(), "nf-rest-blobs-"));
  const blobs = new FilesystemBlobStore({ root: blobRoot });
  const notifier = new Notifier({ connectionString: databaseUrl, applicationName: "rest-test-notifier", channels: [TASKS_CHANNEL, WORKFLOW_EVENTS_CHANNEL] });
  await notifier.start();
  const deps: RestDeps = { db, blobs, notifier: () => notifier, auth: serverAuth, sealingKeys: sealingKeysOf({ secret: TEST_INSTANCE_SECRET, previousSecrets: [] }), logger: { info: () => undefined, warn: (obj, msg) => console.warn(msg, obj), error: (obj, msg) => console.error(msg, obj) } };
  const server = await serveRest(deps);
  return {
    deps,
    blobs,
    notifier,
    server,
    api: apiClient(server.baseUrl),
    close: async () => {
      await server.close();
      await notifier.close();
      await rm(blobRoot, { recursive: true, force: true });
    },
  };
}
