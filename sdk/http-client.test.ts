import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NodeFlowApiError } from "./api-error";
import { createNodeFlowClient } from "./http-client";

// A real HTTP server on loopback: the client is tested over the wire, not against a fake fetch.
const servers: ReturnType<typeof createServer>[] = [];
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const notReady = { ok: false, database: { ok: true }, migrations: { pending: ["0003_x"], unknown: [], changed: [] } };

describe("createNodeFlowClient", () => {
  it("waits until readiness turns 200 and sends the API key", async () => {
    let calls = 0;
    let auth: string | undefined;
    const baseUrl = await serve((req, res) => {
      auth = req.headers.authorization;
      calls += 1;
      const ok = calls >= 3;
      res.writeHead(ok ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? { ...notReady, ok: true, migrations: { pending: [], unknown: [], changed: [] } } : notReady));
    });
    const report = await createNodeFlowClient({ baseUrl, apiKey: "nf_key" }).waitUntilReady({ intervalMs: 5 });
    expect(report.ok).toBe(true);
    expect(calls).toBe(3);
    expect(auth).toBe("Bearer nf_key");
  });

  it("gives up with the reason the server reported", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify(notReady));
    });
    await expect(createNodeFlowClient({ baseUrl }).waitUntilReady({ timeoutMs: 50, intervalMs: 5 })).rejects.toThrow(
      /pending migrations: 0003_x/,
    );
  });

  it("raises problem+json errors with their detail", async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(500, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ title: "Internal", detail: "boom" }));
    });
    const error = await createNodeFlowClient({ baseUrl }).ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeFlowApiError);
    expect((error as NodeFlowApiError).status).toBe(500);
    expect((error as NodeFlowApiError).detail).toBe("boom");
    expect((error as NodeFlowApiError).message).toBe("boom (500 from GET /api/health/ready)");
    expect(await createNodeFlowClient({ baseUrl }).live()).toBe(false);
  });
});
