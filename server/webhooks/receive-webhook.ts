import type { Db } from "@/db/pool";
import { isTerminalWorkflowStatus } from "../../engine";
import { startExecution } from "../executions/start-execution";
import { waitForWorkflowEvent } from "../executions/wait-for-workflow";
import type { BlobStore } from "../lib/blob-store";
import type { Notifier } from "../lib/notifier";
import type { SecretLookup } from "../lib/secret-lookup";
import { resolvePayload } from "../lib/payload-offload";
import { findUnstorableValue } from "../lib/unstorable-input";
import { findWebhookForCall, finishWebhookCallback, insertWebhookCallback } from "../store/incoming-webhooks";
import type { IncomingWebhookRow } from "../store/incoming-webhooks";
import { getWorkflowExecution } from "../store/workflow-executions";
import type { ApiAnswer, ApiRequest } from "../web/api-exchange";
import { BodyTooLargeError } from "../web/api-exchange";
import { isDatabaseOutage, OUTAGE_MESSAGE, OUTAGE_RETRY_AFTER_SECONDS } from "../web/database-outage";
import type { StreakLogger } from "../lib/failure-streak";
import { CallRate } from "./call-rate";
import { verifyWebhookCall } from "./webhook-auth";
import { webhookEventTopic } from "./webhook-config";
import { mapWebhookCall } from "./webhook-mapping";
import type { CallDocument, MappedCall } from "./webhook-mapping";

/**
 * A sender's call to `/api/hooks/{namespace}/{name}`: deliberately public —
 * the webhook's secret is the credential — and in this order: find the
 * webhook (404 when there is none or it is disabled: an address says nothing
 * about what is behind it), its rate (429), the body within its limit (413),
 * the secret (401; 409 for a timestamped signature seen before), the body
 * read as JSON, a form or text (400, 415), the mapping to the run's input,
 * and the start — idempotent on the webhook's key template, so a sender's
 * retry starts one run; a run it starts also publishes the event
 * `webhook:<name>` for the namespace's event handlers, in the start's
 * transaction (only when an active handler listens). Every call that reaches a webhook is recorded
 * (WebhookCallbacks) with why it was refused; the sender learns only the
 * status and a short reason that names nothing secret.
 */

export interface WebhookDeps {
  db: Db;
  blobs: BlobStore;
  notifier: () => Notifier | null;
  secrets: SecretLookup;
  logger?: StreakLogger & { error(obj: object, msg: string): void };
  now?: () => number;
  /** Shared by every call of the process; one is made per deps object when absent. */
  rate?: CallRate;
}

export const WEBHOOK_PATH_PREFIX = "/api/hooks/";

const HIDDEN_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
const rates = new WeakMap<object, CallRate>();

function answer(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): ApiAnswer {
  return { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers }, body: JSON.stringify(body) };
}

function refused(status: number, error: string, headers: Record<string, string> = {}): ApiAnswer {
  return answer(status, { error }, headers);
}

/** The namespace and webhook names of a hook URL, or null for any other path. */
export function webhookAddress(url: string): { namespace: string; name: string } | null {
  const { pathname } = new URL(url);
  if (!pathname.startsWith(WEBHOOK_PATH_PREFIX)) return null;
  const segments = pathname.slice(WEBHOOK_PATH_PREFIX.length).split("/");
  if (segments.length !== 2) return null;
  try {
    const [namespace, name] = segments.map((s) => decodeURIComponent(s));
    return /^[a-z0-9][a-z0-9_-]{0,62}$/.test(name!) && /^[a-z0-9][a-z0-9-]{0,62}$/.test(namespace!) ? { namespace: namespace!, name: name! } : null;
  } catch {
    return null;
  }
}

export async function answerWebhookCall(depsOrFactory: WebhookDeps | (() => WebhookDeps), request: ApiRequest): Promise<ApiAnswer> {
  const deps = typeof depsOrFactory === "function" ? depsOrFactory() : depsOrFactory;
  try {
    return await serve(deps, request);
  } catch (error) {
    if (isDatabaseOutage(error, deps.logger)) return refused(503, OUTAGE_MESSAGE, { "retry-after": String(OUTAGE_RETRY_AFTER_SECONDS) });
    if (deps.logger) deps.logger.error({ err: error, path: new URL(request.url).pathname }, "webhook call failed");
    else console.error("webhook call failed:", error);
    return refused(500, "The call failed on the server; it has been logged");
  }
}

const NO_WEBHOOK = "No webhook at this address";

async function serve(deps: WebhookDeps, request: ApiRequest): Promise<ApiAnswer> {
  const started = Date.now();
  const address = webhookAddress(request.url);
  if (address === null) return refused(404, NO_WEBHOOK);
  const webhook = await findWebhookForCall(deps.db, address.namespace, address.name);
  if (webhook === undefined) return refused(404, NO_WEBHOOK);

  const method = request.method.toUpperCase();
  const record = async (status: number, refusal: string, extra: { bodyBytes?: number } = {}): Promise<void> => {
    const id = await insertWebhookCallback(deps.db, { webhookId: webhook.id, namespaceId: webhook.namespaceId, method, status, refusal, bodyBytes: extra.bodyBytes ?? 0 });
    if (id !== null) await finishWebhookCallback(deps.db, { id, status, refusal, durationMs: Date.now() - started });
  };

  if (!webhook.enabled) {
    await record(404, "the webhook is disabled");
    return refused(404, NO_WEBHOOK);
  }
  if (method !== "POST" && !(method === "GET" && webhook.allowGet)) {
    await record(405, `${method} is not accepted`);
    return refused(405, `Send a POST${webhook.allowGet ? " or a GET" : ""}`, { allow: webhook.allowGet ? "POST, GET" : "POST" });
  }
  const rate = deps.rate ?? rateOf(deps);
  const allowed = rate.take(webhook.id, webhook.ratePerMinute);
  if (!allowed.ok) {
    await record(429, `over ${webhook.ratePerMinute} calls a minute`);
    return refused(429, "Too many calls; slow down", { "retry-after": String(allowed.retryAfterSeconds) });
  }

  let bytes: Uint8Array;
  try {
    bytes = (method === "GET" ? null : await request.readBody(webhook.maxBodyBytes)) ?? new Uint8Array();
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    await record(413, `the body is over ${webhook.maxBodyBytes} bytes`);
    return refused(413, `The body is over the limit of ${webhook.maxBodyBytes} bytes`);
  }

  const secret = await deps.secrets(webhook.namespaceId, webhook.secretName);
  if (secret === null) {
    await record(401, `the secret ${webhook.secretName} does not exist`, { bodyBytes: bytes.byteLength });
    return refused(401, "The call is not authenticated");
  }
  const nowSeconds = Math.floor((deps.now ?? Date.now)() / 1000);
  const verdict = verifyWebhookCall({ mode: webhook.authMode, secret, header: request.headers.get(webhook.authHeader), body: bytes, toleranceSeconds: webhook.toleranceSeconds, nowSeconds });
  if (!verdict.ok) {
    await record(401, verdict.refusal, { bodyBytes: bytes.byteLength });
    return refused(401, "The call is not authenticated");
  }

  const url = new URL(request.url);
  const body = readBody(bytes, request.headers.get("content-type"));
  if (!body.ok) {
    await record(body.status, body.error, { bodyBytes: bytes.byteLength });
    return refused(body.status, body.error);
  }
  const roots = { body: body.value, headers: headerDocument(request, webhook), query: Object.fromEntries(url.searchParams) };
  const unstorable = findUnstorableValue(roots);
  if (unstorable !== null) {
    const error = `The ${unstorable.path.join(".")} ${unstorable.message}`;
    await record(400, error, { bodyBytes: bytes.byteLength });
    return refused(400, error);
  }

  const mapped = mapWebhookCall(webhook, roots);
  const idempotencyKey = mapped.idempotencyKey;
  const callId = await insertWebhookCallback(deps.db, {
    webhookId: webhook.id,
    namespaceId: webhook.namespaceId,
    method,
    status: 202,
    signatureDigest: verdict.signatureDigest,
    idempotencyKey,
    bodyBytes: bytes.byteLength,
  });
  if (callId === null) {
    await record(409, "a signature already seen (a replay)", { bodyBytes: bytes.byteLength });
    return refused(409, "This signature was already used; sign each call afresh");
  }
  const finish = async (status: number, outcome: { workflowId?: string; refusal?: string }) =>
    finishWebhookCallback(deps.db, { id: callId, status, workflowId: outcome.workflowId ?? null, refusal: outcome.refusal ?? null, durationMs: Date.now() - started });

  const startedRun = await startExecution(deps, {
    namespaceId: webhook.namespaceId,
    name: webhook.workflowName,
    version: webhook.workflowVersion ?? undefined,
    input: mapped.input,
    correlationId: mapped.correlationId,
    // Scoped to the webhook: two webhooks (or a webhook and a REST caller) never share a key by accident.
    idempotencyKey: idempotencyKey === null ? null : `webhook:${webhook.id}:${idempotencyKey}`,
    createdBy: `webhook:${webhook.name}`,
    announce: { topic: webhookEventTopic(webhook.name), payload: (workflowId) => webhookEventPayload(webhook, workflowId, mapped, roots) },
  });
  if (!startedRun.ok) {
    if (startedRun.reason === "invalid-input") {
      const problems = startedRun.problems.map((p) => `${p.path.join(".") || "input"}: ${p.message}`);
      await finish(422, { refusal: `the mapped input was refused: ${problems.join("; ")}` });
      return answer(422, { error: "The call's data does not make a valid input for the workflow", problems });
    }
    const why = startedRun.reason === "not-found" ? `the workflow ${webhook.workflowName} does not exist` : startedRun.message;
    await finish(startedRun.reason === "not-found" ? 404 : 409, { refusal: why });
    return startedRun.reason === "not-found" ? refused(404, NO_WEBHOOK) : refused(409, "A run for this call already exists and its key refuses another");
  }
  const { workflowId, created } = startedRun;

  if (webhook.responseMode === "accepted") {
    await finish(202, { workflowId });
    return answer(202, { workflowId, created });
  }
  const ended = await waitForWorkflowEvent(deps, {
    workflowId,
    timeoutMs: webhook.waitSeconds * 1000,
    signal: request.signal,
    reached: async () => isTerminalWorkflowStatus((await getWorkflowExecution(deps.db, webhook.namespaceId, workflowId))?.status ?? "COMPLETED"),
  });
  if (!ended) {
    await finish(202, { workflowId });
    return answer(202, { workflowId, created, status: "RUNNING" });
  }
  const outcome = await runOutcome(deps, webhook, workflowId);
  await finish(200, { workflowId });
  return answer(200, { workflowId, created, ...outcome });
}

/**
 * What a handler of `webhook:<name>` sees as `$` (and its `${…}` roots): the
 * run it started, the mapped input, and the call as the mapping saw it —
 * body, headers without the credentials, query.
 */
function webhookEventPayload(webhook: IncomingWebhookRow, workflowId: string, mapped: MappedCall, call: CallDocument) {
  return {
    webhook: webhook.name,
    workflowId,
    workflowType: webhook.workflowName,
    correlationId: mapped.correlationId,
    input: mapped.input,
    body: call.body,
    headers: call.headers,
    query: call.query,
  };
}

function rateOf(deps: WebhookDeps): CallRate {
  let rate = rates.get(deps);
  if (rate === undefined) {
    rate = new CallRate();
    rates.set(deps, rate);
  }
  return rate;
}

type ReadBody = { ok: true; value: unknown } | { ok: false; status: 400 | 415; error: string };

/** The body as the mapping sees it: JSON parsed, a form as an object, text as a string; none as null. */
function readBody(bytes: Uint8Array, contentType: string | null): ReadBody {
  if (bytes.byteLength === 0) return { ok: true, value: null };
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    return { ok: false, status: 415, error: "The body is not UTF-8 text; send JSON, a form or text" };
  }
  const type = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") return { ok: true, value: Object.fromEntries(new URLSearchParams(text)) };
  if (type === "" || type === "application/json" || type.endsWith("+json")) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch (error) {
      // Without a content type, text that is not JSON is text.
      if (type === "") return { ok: true, value: text };
      return { ok: false, status: 400, error: `The body is not valid JSON: ${(error as Error).message}` };
    }
  }
  return { ok: true, value: text };
}

/** The call's headers by lower-case name, without the credentials: not the auth header, not cookies. */
function headerDocument(request: ApiRequest, webhook: IncomingWebhookRow): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of request.headers.entries()) {
    const key = name.toLowerCase();
    if (!HIDDEN_HEADERS.has(key) && key !== webhook.authHeader) out[key] = value;
  }
  return out;
}

async function runOutcome(deps: WebhookDeps, webhook: IncomingWebhookRow, workflowId: string): Promise<Record<string, unknown>> {
  const row = await getWorkflowExecution(deps.db, webhook.namespaceId, workflowId);
  if (row === undefined) return { status: "UNKNOWN" };
  if (webhook.responseNodeRef !== null) {
    const task = await deps.db
      .selectFrom("TaskExecutions")
      .select(["output", "outputRef", "status"])
      .where("namespaceId", "=", webhook.namespaceId)
      .where("workflowId", "=", workflowId)
      .where("refName", "=", webhook.responseNodeRef)
      .orderBy("iteration", "desc")
      .orderBy("attempt", "desc")
      .limit(1)
      .executeTakeFirst();
    const output = task === undefined ? null : await resolvePayload(deps.blobs, { inline: task.output, ref: task.outputRef }, `the output of ${webhook.responseNodeRef}`);
    return { status: row.status, output };
  }
  const output = await resolvePayload(deps.blobs, { inline: row.output, ref: row.outputRef }, `the output of run ${workflowId}`);
  return { status: row.status, output, ...(row.reasonForIncompletion === null ? {} : { reasonForIncompletion: row.reasonForIncompletion }) };
}
