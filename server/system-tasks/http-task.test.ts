import type { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHttpTask } from "./http-task";
import type { HttpTaskOptions } from "./http-task";

/** A local server whose behaviour each test picks by path. */
let server: http.Server;
let port: number;
let received: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      switch (new URL(req.url ?? "/", "http://local").pathname) {
        case "/json":
          res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "X-Trace": "abc" });
          res.end(JSON.stringify({ hello: "world", n: 1 }));
          return;
        case "/text":
          res.writeHead(201, { "Content-Type": "text/plain" });
          res.end(`got ${body}`);
          return;
        case "/broken-json":
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end("{not json");
          return;
        case "/fail":
          res.writeHead(500, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ error: "boom" }));
          return;
        case "/redirect":
          res.writeHead(302, { Location: "http://169.254.169.254/latest/meta-data/" });
          res.end();
          return;
        case "/hang":
          return; // never answers
        case "/big":
          res.writeHead(200, { "Content-Type": "text/plain" });
          res.end("x".repeat(5000));
          return;
        case "/big-chunked":
          res.writeHead(200, { "Content-Type": "text/plain" });
          for (let i = 0; i < 10; i++) res.write("y".repeat(500));
          res.end();
          return;
        default:
          res.writeHead(204);
          res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received = [];
});

const local: HttpTaskOptions = { allowPrivateNetworks: true };
const request = (http_request: Record<string, unknown>) => ({ http_request });

describe("runHttpTask against a local server (private networks allowed)", () => {
  it("GET: completes with Conductor's response shape, JSON body parsed, headers as lists", async () => {
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/json`, headers: { "X-Api-Key": "k1" } }), local);
    expect(outcome.status).toBe("COMPLETED");
    const response = outcome.output.response as Record<string, unknown>;
    expect(response).toMatchObject({ statusCode: 200, reasonPhrase: "OK", body: { hello: "world", n: 1 } });
    expect((response.headers as Record<string, string[]>)["X-Trace"]).toEqual(["abc"]);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: "GET", url: "/json" });
    expect(received[0]!.headers).toMatchObject({ "x-api-key": "k1", accept: "application/json" });
  });

  it("POST: an object body is sent as JSON; a text response stays text", async () => {
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/text`, method: "post", body: { a: [1, 2] } }), local);
    expect(outcome.status).toBe("COMPLETED");
    expect(outcome.output.response).toMatchObject({ statusCode: 201, body: 'got {"a":[1,2]}' });
    expect(received[0]!.headers["content-type"]).toBe("application/json");
    expect(received[0]!.method).toBe("POST");
  });

  it("keeps a body that claims JSON but is not as text, and an empty body as null", async () => {
    const broken = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/broken-json` }), local);
    expect(broken.output.response).toMatchObject({ body: "{not json" });
    const empty = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/empty`, method: "DELETE" }), local);
    expect(empty).toMatchObject({ status: "COMPLETED", output: { response: { statusCode: 204, body: null } } });
  });

  it("a non-2xx fails the task, and the output still records status, headers and body", async () => {
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/fail?token=secret` }), local);
    expect(outcome.status).toBe("FAILED");
    expect(outcome.reason).toMatch(/returned 500 Internal Server Error/);
    expect(outcome.reason).not.toMatch(/secret/);
    expect(outcome.output.response).toMatchObject({ statusCode: 500, body: { error: "boom" }, reasonPhrase: "Internal Server Error" });
  });

  it("does not follow a redirect (which could point anywhere): a 3xx fails with its Location recorded", async () => {
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/redirect` }), local);
    expect(outcome.status).toBe("FAILED");
    expect(outcome.output.response).toMatchObject({ statusCode: 302, headers: { Location: ["http://169.254.169.254/latest/meta-data/"] } });
    expect(received).toHaveLength(1);
  });

  it("a server that never answers fails the task at the read timeout", async () => {
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}/hang`, readTimeOut: 200 }), local);
    expect(outcome.status).toBe("FAILED");
    expect(outcome.reason).toMatch(/read timed out.*200 ms/);
  });

  it("a response over the size cap fails with a clear reason, with or without Content-Length", async () => {
    for (const path of ["/big", "/big-chunked"]) {
      const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${port}${path}` }), { ...local, maxResponseBytes: 1000 });
      expect(outcome.status, path).toBe("FAILED");
      expect(outcome.reason, path).toMatch(/response body larger than 1000 bytes/);
    }
  });

  it("a refused connection fails the task (retryable)", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await runHttpTask(request({ uri: `http://127.0.0.1:${closedPort}/` }), local);
    expect(outcome).toMatchObject({ status: "FAILED", reason: expect.stringMatching(/connection refused/) as unknown });
  });

  it("connects to the address its lookup returned (the pin), whatever the name", async () => {
    const lookup = ((_host: string, options: object, callback: (e: null, a: { address: string; family: number }[]) => void) =>
      callback(null, [{ address: "127.0.0.1", family: 4 }])) as unknown as typeof dnsLookup;
    const outcome = await runHttpTask(request({ uri: `http://service.invalid:${port}/json` }), { ...local, lookup });
    expect(outcome.status).toBe("COMPLETED");
    expect(received[0]!.headers.host).toBe(`service.invalid:${port}`);
  });
});

describe("runHttpTask: invalid requests fail terminally", () => {
  it.each([
    [{}, /no http_request/],
    [{ http_request: { method: "GET" } }, /uri is missing/],
    [request({ uri: "not a url" }), /not an absolute URL/],
    [request({ uri: "file:///etc/passwd" }), /unsupported URL scheme "file"/],
    [request({ uri: "http://127.0.0.1/", method: "BREW" }), /method "BREW" is not one of/],
    [request({ uri: "http://127.0.0.1/", readTimeOut: -5 }), /readTimeOut must be a positive number/],
    [request({ uri: `http://127.0.0.1:1/`, headers: { "X-Bad": "a\r\nInjected: 1" } }), /invalid request/],
  ])("%j", async (input, why) => {
    const outcome = await runHttpTask(input, local);
    expect(outcome.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(outcome.reason).toMatch(why);
  });
});

describe("runHttpTask: the default network policy", () => {
  const strict: HttpTaskOptions = { allowPrivateNetworks: false };

  it.each([
    ["loopback", () => `http://127.0.0.1:${port}/json`, /127\.0\.0\.1: loopback/],
    ["private 10.x", () => "http://10.0.0.1/", /10\.0\.0\.1: private/],
    ["cloud metadata", () => "http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254: link-local/],
    ["IPv6 loopback", () => `http://[::1]:${port}/json`, /::1: unspecified, loopback/],
    ["a name resolving to loopback", () => `http://localhost:${port}/json`, /localhost: it resolves to (127\.0\.0\.1|::1)/],
  ])("refuses %s terminally, before any byte is sent", async (_name, uri, why) => {
    const outcome = await runHttpTask(request({ uri: uri() }), strict);
    expect(outcome.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(outcome.reason).toMatch(why);
    expect(outcome.reason).toMatch(/NODE_FLOW_HTTP_ALLOW_PRIVATE/);
    expect(received).toEqual([]);
  });

  it("checks every address a name resolves to, not just the first", async () => {
    const lookup = ((_host: string, options: object, callback: (e: null, a: { address: string; family: number }[]) => void) =>
      callback(null, [
        { address: "93.184.215.14", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ])) as unknown as typeof dnsLookup;
    const outcome = await runHttpTask(request({ uri: `http://rebind.invalid:${port}/json` }), { ...strict, lookup });
    expect(outcome.status).toBe("FAILED_WITH_TERMINAL_ERROR");
    expect(outcome.reason).toMatch(/rebind\.invalid: it resolves to 127\.0\.0\.1/);
    expect(received).toEqual([]);
  });
});
