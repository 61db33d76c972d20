import { describe, expect, it } from "vitest";
import { NodeFlowApiError, NodeFlowNetworkError } from "./api-error";
import { createTransport } from "./http-transport";
import type { RetryInfo, TransportOptions } from "./http-transport";
import { backoffDelay, DEFAULT_RETRY_OPTIONS, parseRetryAfter, resolveRetryOptions } from "./retry-policy";

/**
 * The retry policy and the error mapping, against a scripted fake fetch: each
 * call takes the next step of the script (a Response, or an error to throw),
 * and the transport's waits are recorded instead of slept.
 */

type Step = Response | Error | (() => Response | Error);

function problem(status: number, body: object, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/problem+json", ...headers } });
}
function ok(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
/** What undici throws for a refused connection: a TypeError whose cause carries the code. */
function refused(): Error {
  return new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) });
}
function reset(): Error {
  return new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
}

function scripted(steps: Step[], options: Partial<TransportOptions> = {}) {
  const calls: { url: string; init: RequestInit }[] = [];
  const waits: number[] = [];
  const retries: RetryInfo[] = [];
  const fakeFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    calls.push({ url: typeof input === "string" ? input : input instanceof URL ? input.href : input.url, init: init ?? {} });
    const step = steps.shift();
    if (step === undefined) throw new Error("the script ran out");
    const value = typeof step === "function" ? step() : step;
    return value instanceof Response ? Promise.resolve(value) : Promise.reject(value);
  };
  const transport = createTransport({
    baseUrl: "http://nf.test/",
    apiKey: "nf_secret",
    fetch: fakeFetch,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    onRetry: (info) => retries.push(info),
    ...options,
  });
  return { transport, calls, waits, retries, remaining: () => steps.length };
}

describe("retry policy", () => {
  it("grows exponentially to the cap with half of each wait random", () => {
    const options = resolveRetryOptions({ minDelayMs: 100, maxDelayMs: 1000, factor: 2 });
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, options, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, options, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("refuses options that make no sense", () => {
    expect(() => resolveRetryOptions({ retries: -1 })).toThrow(/retries/);
    expect(() => resolveRetryOptions({ minDelayMs: 500, maxDelayMs: 100 })).toThrow(/maxDelayMs/);
    expect(resolveRetryOptions(false).retries).toBe(0);
    expect(resolveRetryOptions({ retries: undefined })).toEqual(DEFAULT_RETRY_OPTIONS);
  });
});

describe("createTransport", () => {
  it("sends JSON with the API key as a Bearer token", async () => {
    const { transport, calls } = scripted([ok({ id: "x" }, 201)]);
    const response = await transport.send<{ id: string }>({ method: "POST", path: "/api/v1/things", query: { a: 1, b: undefined }, body: { n: 1 } });
    expect(response).toMatchObject({ status: 201, body: { id: "x" } });
    expect(calls[0]!.url).toBe("http://nf.test/api/v1/things?a=1");
    const headers = calls[0]!.init.headers as Record<string, string>;
    expect(headers.authorization).toBe("Bearer nf_secret");
    expect(headers["content-type"]).toBe("application/json");
    expect(calls[0]!.init.body).toBe('{"n":1}');
  });

  it("retries 5xx and network errors with growing waits, then succeeds", async () => {
    const { transport, calls, waits, retries } = scripted([problem(500, { title: "Internal" }), reset(), problem(502, {}), ok({ done: true })]);
    const response = await transport.send({ method: "GET", path: "/x" });
    expect(response.body).toEqual({ done: true });
    expect(calls).toHaveLength(4);
    // random() = 0.5: three quarters of 200, 400, 800.
    expect(waits).toEqual([150, 300, 600]);
    expect(retries.map((r) => r.status)).toEqual([500, undefined, 502]);
  });

  it("honours Retry-After on 429 and 503 instead of its own backoff", async () => {
    const { transport, waits } = scripted([
      problem(429, { title: "Too many requests" }, { "retry-after": "2" }),
      problem(503, { title: "Unavailable" }, { "retry-after": "1" }),
      ok({}),
    ]);
    await transport.send({ method: "POST", path: "/x", body: {} });
    expect(waits).toEqual([2000, 1000]);
  });

  it("gives up at once on a Retry-After longer than it is willing to wait, and says how long", async () => {
    const { transport, calls } = scripted([problem(503, { title: "Unavailable", detail: "maintenance" }, { "retry-after": "3600" }), ok({})]);
    const error = (await transport.send({ method: "GET", path: "/x" }).catch((e: unknown) => e)) as NodeFlowApiError;
    expect(error).toBeInstanceOf(NodeFlowApiError);
    expect(error.retryAfterMs).toBe(3_600_000);
    expect(calls).toHaveLength(1);
  });

  it("never retries a 4xx, and maps the problem document onto the error", async () => {
    const body = {
      type: "https://node-flow.dev/problems/validation",
      title: "The request is not valid",
      status: 400,
      detail: "/body/queue: Too small",
      errors: [{ pointer: "/body/queue", message: "Too small" }, { pointer: "/body/count", message: "Too big", code: "too_big" }],
    };
    for (const status of [400, 401, 403, 404, 409, 422]) {
      const { transport, calls } = scripted([problem(status, { ...body, status }), ok({})]);
      const error = (await transport.send({ method: "POST", path: "/api/v1/ns/a/tasks/poll", body: {} }).catch((e: unknown) => e)) as NodeFlowApiError;
      expect(calls, `status ${status}`).toHaveLength(1);
      expect(error).toBeInstanceOf(NodeFlowApiError);
      expect(error).toMatchObject({ status, title: body.title, detail: body.detail, type: body.type, attempts: 1, method: "POST", path: "/api/v1/ns/a/tasks/poll" });
      expect(error.errors).toEqual(body.errors);
      expect(error.fieldError("/body/count")).toEqual({ pointer: "/body/count", message: "Too big", code: "too_big" });
      expect(error.message).toBe(`/body/queue: Too small (${status} from POST /api/v1/ns/a/tasks/poll)`);
    }
  });

  it("makes a usable error of a proxy's HTML page", async () => {
    const html = new Response("<html>Bad gateway</html>", { status: 502, headers: { "content-type": "text/html" } });
    const { transport } = scripted([html], { retry: false });
    const error = (await transport.send({ method: "GET", path: "/x" }).catch((e: unknown) => e)) as NodeFlowApiError;
    expect(error).toMatchObject({ status: 502, title: "HTTP 502", detail: undefined, body: "<html>Bad gateway</html>", errors: [] });
  });

  it("stops after the configured retries and says how many attempts it made", async () => {
    const { transport, calls, remaining } = scripted([problem(500, {}), problem(500, {}), problem(500, {}), ok({})], { retry: { retries: 2 } });
    const error = (await transport.send({ method: "GET", path: "/x" }).catch((e: unknown) => e)) as NodeFlowApiError;
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(3);
    expect(calls).toHaveLength(3);
    expect(remaining()).toBe(1);

    const network = scripted([reset(), reset()], { retry: { retries: 1 } });
    const failure = await network.transport.send({ method: "GET", path: "/y" }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NodeFlowNetworkError);
    expect((failure as NodeFlowNetworkError).attempts).toBe(2);
    expect((failure as NodeFlowNetworkError).message).toMatch(/GET \/y failed after 2 attempts: fetch failed \(UND_ERR_SOCKET\)/);
  });

  it("retries a non-idempotent request only where the server certainly did not act", async () => {
    // A 500 or a reset connection may come after the server acted: not retried.
    for (const step of [problem(500, {}), problem(502, {}), reset()]) {
      const { transport, calls } = scripted([step, ok({})]);
      await expect(transport.send({ method: "POST", path: "/x", body: {}, idempotent: false })).rejects.toBeDefined();
      expect(calls).toHaveLength(1);
    }
    // 429, 503 and a refused connection mean it did not: retried.
    const { transport, calls } = scripted([problem(429, {}), problem(503, {}), refused(), ok({ saved: 1 })]);
    expect((await transport.send({ method: "POST", path: "/x", body: {}, idempotent: false })).body).toEqual({ saved: 1 });
    expect(calls).toHaveLength(4);
  });

  it("returns an accepted error status as an answer", async () => {
    const { transport } = scripted([problem(503, { ok: false })]);
    expect(await transport.send({ method: "GET", path: "/ready", acceptStatuses: [503] })).toMatchObject({ status: 503, body: { ok: false } });
  });

  it("stops retrying when the caller aborts, with the caller's reason", async () => {
    const controller = new AbortController();
    const reason = new Error("shutting down");
    const { transport, calls } = scripted([problem(500, {}), ok({})], {
      sleep: () => {
        controller.abort(reason);
        return Promise.reject(reason);
      },
    });
    await expect(transport.send({ method: "GET", path: "/x", signal: controller.signal })).rejects.toBe(reason);
    expect(calls).toHaveLength(1);
  });

  it("counts an attempt that outlives its timeout as a network error, and retries it", async () => {
    let attempt = 0;
    const slowThenFast = (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      attempt += 1;
      if (attempt > 1) return Promise.resolve(ok({ attempt }));
      return new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason as Error)));
    };
    const transport = createTransport({ baseUrl: "http://nf.test", fetch: slowThenFast, timeoutMs: 20, sleep: () => Promise.resolve() });
    expect((await transport.send({ method: "GET", path: "/x" })).body).toEqual({ attempt: 2 });
  });

  it("throws a body that cannot be JSON before sending anything", async () => {
    const { transport, calls } = scripted([ok({})]);
    await expect(transport.send({ method: "POST", path: "/x", body: { n: 1n } })).rejects.toThrow(TypeError);
    expect(calls).toHaveLength(0);
  });
});
