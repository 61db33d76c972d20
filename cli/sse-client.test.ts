import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { SseOpenError, readSse } from "./sse-client";
import type { SseMessage } from "./sse-client";

/** A server that writes `chunks` as an event stream, each in its own write, then ends. */
async function streaming(chunks: string[], status = 200, contentType = "text/event-stream"): Promise<{ url: string; headers: () => Record<string, unknown>; close: () => void }> {
  let seen: Record<string, unknown> = {};
  const server = createServer((req, res) => {
    seen = req.headers;
    res.writeHead(status, { "content-type": contentType });
    void (async () => {
      for (const chunk of chunks) {
        res.write(chunk);
        await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/s`, headers: () => seen, close: () => server.close() };
}

describe("readSse", () => {
  it("reads messages split anywhere across chunks, skips comments and sends the key and the resume point", async () => {
    const server = await streaming(["retry: 1000\n\n: heartbeat\n\nid: 7\nevent: hist", "ory\ndata: {\"a\":1}\n", "\nevent: workflow\r\ndata: line one\r\ndata: line two\r\n\r\n"]);
    try {
      const messages: SseMessage[] = [];
      for await (const m of readSse(server.url, "nf_key", new AbortController().signal, { lastEventId: "6" })) messages.push(m);
      expect(messages).toEqual([
        { event: "history", data: '{"a":1}', id: "7" },
        { event: "workflow", data: "line one\nline two", id: "7" },
      ]);
      expect(server.headers()).toMatchObject({ authorization: "Bearer nf_key", "last-event-id": "6" });
    } finally {
      server.close();
    }
  });

  it("an answer that is not an event stream is an SseOpenError with its status", async () => {
    const server = await streaming(['{"error":"Sign in first."}'], 401, "application/json");
    try {
      const reading = readSse(server.url, "nf_key", new AbortController().signal)[Symbol.asyncIterator]().next();
      await expect(reading).rejects.toBeInstanceOf(SseOpenError);
      await expect(readSse(server.url, "nf_key", new AbortController().signal)[Symbol.asyncIterator]().next()).rejects.toMatchObject({ status: 401, message: expect.stringContaining("Sign in first.") as unknown });
    } finally {
      server.close();
    }
  });
});
