/**
 * The typed HTTP client remote workers and scripts use to talk to node-flow.
 * It speaks plain `fetch`, so it runs in Node 20+, Deno, Bun and browsers, and it
 * never carries a database driver (a lint rule keeps it that way).
 */

/** Readiness as `/api/health/ready` reports it. */
export interface ReadinessReport {
  ok: boolean;
  database: { ok: boolean; serverVersionNum?: number; error?: string };
  migrations: { pending: string[]; unknown: string[]; changed: string[] };
}

/** An error response, read from RFC 9457 `application/problem+json` when the server sends one. */
export class NodeFlowApiError extends Error {
  override name = "NodeFlowApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export interface NodeFlowClientOptions {
  /** The server's origin, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An API key; sent as a Bearer token. */
  apiKey?: string;
  /** A `fetch` to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

export interface NodeFlowClient {
  /** True when the process answers at all. */
  live(): Promise<boolean>;
  /** The readiness report; resolves for both ready (200) and not ready (503). */
  ready(): Promise<ReadinessReport>;
  /** Polls readiness until ready, or rejects after `timeoutMs` with the last report's reason. */
  waitUntilReady(options?: { timeoutMs?: number; intervalMs?: number }): Promise<ReadinessReport>;
}

function describeNotReady(report: ReadinessReport | undefined, error: unknown): string {
  if (report && !report.database.ok) return `database: ${report.database.error ?? "unavailable"}`;
  if (report && report.migrations.pending.length > 0) return `pending migrations: ${report.migrations.pending.join(", ")}`;
  if (report && report.migrations.unknown.length > 0) return `database is ahead of this build: ${report.migrations.unknown.join(", ")}`;
  return error instanceof Error ? error.message : "no answer";
}

/** Creates a client bound to one server. */
export function createNodeFlowClient(options: NodeFlowClientOptions): NodeFlowClient {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  async function getJson(path: string, acceptStatuses: number[]): Promise<unknown> {
    const response = await doFetch(`${base}${path}`, { headers });
    const text = await response.text();
    const body: unknown = text ? JSON.parse(text) : null;
    if (!response.ok && !acceptStatuses.includes(response.status)) {
      const problem = body as { title?: string; detail?: string } | null;
      throw new NodeFlowApiError(response.status, problem?.detail ?? problem?.title ?? `HTTP ${response.status} from ${path}`, body);
    }
    return body;
  }

  const client: NodeFlowClient = {
    async live() {
      try {
        await getJson("/api/health/live", []);
        return true;
      } catch {
        return false;
      }
    },
    async ready() {
      return (await getJson("/api/health/ready", [503])) as ReadinessReport;
    },
    async waitUntilReady({ timeoutMs = 60_000, intervalMs = 250 } = {}) {
      const deadline = performance.now() + timeoutMs;
      let last: ReadinessReport | undefined;
      let lastError: unknown;
      for (;;) {
        try {
          last = await client.ready();
          if (last.ok) return last;
        } catch (error) {
          lastError = error;
        }
        if (performance.now() >= deadline) {
          throw new Error(`node-flow at ${base} was not ready after ${timeoutMs} ms (${describeNotReady(last, lastError)})`);
        }
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    },
  };
  return client;
}
