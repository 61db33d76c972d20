/**
 * A minimal reader of the server's Server-Sent Events streams
 * (server/realtime/): `GET` with the API key as a Bearer token, then one
 * `{ event, data, id }` per message. Node has no EventSource, and the
 * streams' format is the plain subset this reads: `id:`, `event:`, `data:`
 * lines, a blank line ending a message, `:` comments as heartbeats.
 */

export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

/** The stream could not be opened: `status` is the HTTP answer, undefined when there was none. */
export class SseOpenError extends Error {
  override name = "SseOpenError";
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** Opens `url` and yields its messages until the server ends the stream or `signal` aborts. */
export async function* readSse(url: string, apiKey: string, signal: AbortSignal, options: { lastEventId?: string; onOpen?: () => void } = {}): AsyncGenerator<SseMessage, void, undefined> {
  const { lastEventId } = options;
  let response: Response;
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: "text/event-stream" };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    response = await fetch(url, { headers, signal });
  } catch (error) {
    if (signal.aborted) return;
    throw new SseOpenError(`cannot open ${new URL(url).pathname}: ${(error as Error).message}`, undefined);
  }
  if (!response.ok || response.body === null || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await response.text().catch(() => "");
    throw new SseOpenError(`${new URL(url).pathname} answered ${response.status}${text ? `: ${text.slice(0, 300)}` : ""}`, response.status);
  }
  options.onOpen?.();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  let id: string | undefined;
  const reader = response.body.getReader();
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        if (line === "") {
          if (data.length > 0) yield { event, data: data.join("\n"), id };
          event = "message";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id") id = value;
      }
    }
  } finally {
    reader.releaseLock();
    await response.body.cancel().catch(() => undefined);
  }
}
