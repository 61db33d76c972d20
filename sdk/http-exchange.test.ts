import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchExchange, nodeHttpExchange } from "./http-exchange";
import type { Exchange } from "./http-exchange";

// A real server on loopback: both exchanges are tested over the wire.
let server: http.Server;
let base = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      if (req.url === "/echo") {
        res.writeHead(201, { "content-type": "application/json", "x-seen": "yes" });
        res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body, length: req.headers["content-length"] }));
      } else if (req.url === "/slow") {
        setTimeout(() => res.end("late"), 2_000).unref();
      } else if (req.url === "/cut") {
        res.writeHead(200, { "content-length": "100" });
        res.write("only part");
        setTimeout(() => res.destroy(), 10);
      } else {
        res.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const exchanges: [string, Exchange][] = [
  ["node:http", nodeHttpExchange()],
  ["fetch", fetchExchange((input, init) => fetch(input, init))],
];

describe.each(exchanges)("%s exchange", (_name, exchange) => {
  it("sends method, headers and body, and reads status, headers and the whole body", async () => {
    const body = JSON.stringify({ output: { greeting: "héllo" } });
    const answer = await exchange(`${base}/echo`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body, timeoutMs: 5_000 });
    expect(answer.status).toBe(201);
    expect(answer.header("X-Seen")).toBe("yes");
    expect(answer.header("x-missing")).toBeNull();
    expect(JSON.parse(answer.text)).toEqual({ method: "POST", auth: "Bearer k", body, length: String(Buffer.byteLength(body)) });
  });

  it("answers an error status like any other", async () => {
    const answer = await exchange(`${base}/nothing`, { method: "GET", headers: {}, timeoutMs: 5_000 });
    expect(answer.status).toBe(404);
    expect(answer.text).toBe("");
  });

  it("rejects an attempt that outlives its timeout", async () => {
    await expect(exchange(`${base}/slow`, { method: "GET", headers: {}, timeoutMs: 50 })).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("rejects an answer cut off mid-body", async () => {
    await expect(exchange(`${base}/cut`, { method: "GET", headers: {}, timeoutMs: 5_000 })).rejects.toThrow();
  });

  it("rejects with the caller's reason when its signal aborts", async () => {
    const controller = new AbortController();
    const reason = new Error("stopping");
    const pending = exchange(`${base}/slow`, { method: "GET", headers: {}, signal: controller.signal, timeoutMs: 5_000 });
    setTimeout(() => controller.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);
  });

  it("rejects a refused connection with its code", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const failure: unknown = await exchange(`http://127.0.0.1:${port}/`, { method: "GET", headers: {}, timeoutMs: 5_000 }).catch((error: unknown) => error);
    const codes: unknown[] = [];
    for (let e: unknown = failure; e instanceof Error; e = e.cause) codes.push((e as Error & { code?: unknown }).code);
    expect(codes).toContain("ECONNREFUSED");
  });
});

describe("node:http exchange, keep-alive", () => {
  it("retires an idle socket before the server's Keep-Alive timeout, instead of reusing it as the server closes it", async () => {
    // The server announces "timeout=2": the client must stop reusing a socket after 1 s idle. Reused at 1.3 s,
    // it would be the same connection (the server keeps it 2 s) — the race that ends in ECONNRESET under load.
    let connections = 0;
    const shortLived = http.createServer((_req, res) => res.end("ok"));
    shortLived.keepAliveTimeout = 2_000;
    shortLived.on("connection", () => (connections += 1));
    await new Promise<void>((resolve) => shortLived.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(shortLived.address() as AddressInfo).port}/`;
      const exchange = nodeHttpExchange();
      await exchange(url, { method: "GET", headers: {}, timeoutMs: 5_000 });
      await exchange(url, { method: "GET", headers: {}, timeoutMs: 5_000 });
      expect(connections).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      expect((await exchange(url, { method: "GET", headers: {}, timeoutMs: 5_000 })).text).toBe("ok");
      expect(connections).toBe(2);
    } finally {
      shortLived.closeAllConnections();
      await new Promise((resolve) => shortLived.close(resolve));
    }
  });
});
