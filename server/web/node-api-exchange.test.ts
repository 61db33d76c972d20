import { createServer, request as httpRequest } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ApiAnswer, ApiRequest } from "./api-exchange";
import { BodyTooLargeError } from "./api-exchange";
import { serveApi } from "./node-api-exchange";

let server: Server | undefined;

afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
});

async function serve(handle: (request: ApiRequest) => Promise<ApiAnswer>): Promise<number> {
  const s = createServer((req, res) => void serveApi(req, res, handle));
  server = s;
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return (s.address() as AddressInfo).port;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request over a real socket; `chunks` are written one by one without a Content-Length (chunked). */
function send(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; chunks?: string[] }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: options.method ?? "POST", path: options.path ?? "/x", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end();
  });
}

const json = (status: number, value: unknown): ApiAnswer => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

describe("serveApi", () => {
  it("hands the dispatcher the method, an absolute URL, headers by any case and the body", async () => {
    const port = await serve(async (request) => {
      const body = await request.readBody(1000);
      return json(200, {
        method: request.method,
        url: request.url,
        key: request.headers.get("X-Api-Key"),
        missing: request.headers.get("x-missing"),
        body: body === null ? null : Buffer.from(body).toString("utf8"),
      });
    });
    const reply = await send(port, { path: "/api/v1/a?b=1", headers: { "x-api-key": "k1", host: "flow.example:3000" }, chunks: ['{"a":', "1}"] });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ method: "POST", url: "http://flow.example:3000/api/v1/a?b=1", key: "k1", missing: null, body: '{"a":1}' });
    // One framing the client can trust: a length, not chunks.
    expect(reply.headers["content-length"]).toBe(String(Buffer.byteLength(reply.body)));
    expect(reply.headers["transfer-encoding"]).toBeUndefined();
  });

  it("reads no body as null, and answers a body-less answer with none", async () => {
    const port = await serve(async (request) => ({ status: 204, headers: { "x-body": String(await request.readBody(10)) }, body: null }));
    const reply = await send(port, { method: "GET" });
    expect(reply.status).toBe(204);
    expect(reply.headers["x-body"]).toBe("null");
    expect(reply.body).toBe("");
  });

  it("refuses a chunked upload over the limit while reading it, and the client still gets the answer", async () => {
    const port = await serve(async (request) => {
      try {
        await request.readBody(10);
        return json(200, { read: true });
      } catch (error) {
        if (error instanceof BodyTooLargeError) return json(413, { message: error.message });
        throw error;
      }
    });
    const reply = await send(port, { chunks: ["0123456789", "abc"] });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual({ message: "The body is over the limit of 10 bytes" });
    const declared = await send(port, { headers: { "content-length": "20" }, chunks: ["x".repeat(20)] });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({ message: "The body is 20 bytes; the limit is 10" });
  });

  it("aborts the request's signal when the client goes away before the answer", async () => {
    let aborted: () => void = () => undefined;
    const abortSeen = new Promise<void>((resolve) => (aborted = resolve));
    const port = await serve(
      (request) =>
        new Promise<ApiAnswer>((resolve) => {
          request.signal.addEventListener("abort", () => {
            aborted();
            resolve(json(200, {}));
          });
        }),
    );
    const req = httpRequest({ host: "127.0.0.1", port, method: "GET", path: "/parked" });
    req.on("error", () => undefined);
    req.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    await abortSeen;
  });

  it("answers a dispatcher that throws with a plain 500", async () => {
    const port = await serve(() => Promise.reject(new Error("boom")));
    const reply = await send(port, { method: "GET" });
    expect(reply.status).toBe(500);
    expect(reply.body).toBe("Internal error: boom");
  });
});
