import { authenticateRequest } from "../auth/authenticate";
import { authorizeNamespace } from "../auth/authorize";
import { findExecutionNamespaceId } from "../store/execution-views";
import { findNamespaceById } from "../store/namespaces";
import type { WebContext } from "../web/web-context";
import { executionStream } from "./execution-stream";
import { inboxStream } from "./inbox-stream";
import { namespaceFeedFor, namespaceStream } from "./namespace-feed";
import { sseResponse } from "./sse";

/**
 * The SSE route handlers' bodies (app/api/executions/…/route.ts are thin
 * wrappers). Authentication is the tRPC endpoint's own (authenticateRequest:
 * the session cookie, or a Bearer key), and so is authorization
 * (authorizeNamespace, "read"): no credentials 401; a run the caller may not
 * see is 404 with the same body as a run that does not exist.
 */

type StreamContext = Pick<WebContext, "db" | "notifier" | "logger">;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function problem(status: number, message: string): Response {
  return Response.json({ error: message }, { status, headers: { "cache-control": "no-store" } });
}

/** Last-Event-ID (the browser's resume) wins over ?after= (the page's first connect, from executions.get's lastSeq). */
function resumeSeq(request: Request): number | null {
  const raw = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after") ?? "0";
  return /^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : null;
}

/** GET /api/executions/{id}/stream */
export async function serveExecutionStream(context: StreamContext, request: Request, id: string): Promise<Response> {
  const principal = await authenticateRequest(context.db, request);
  if (!principal) return problem(401, "Sign in first.");
  const notFound = () => problem(404, `No run ${id}`);
  if (!UUID.test(id)) return notFound();
  const namespaceId = await findExecutionNamespaceId(context.db, id);
  if (namespaceId === undefined) return notFound();
  const namespace = await findNamespaceById(context.db, namespaceId);
  if (!namespace) return notFound();
  const wanted = new URL(request.url).searchParams.get("namespace");
  if (wanted !== null && wanted !== namespace.name) return notFound();
  const verdict = await authorizeNamespace(context.db, principal, namespace.name, "read");
  if (!verdict.ok) return verdict.status === 404 ? notFound() : problem(403, verdict.message);
  const afterSeq = resumeSeq(request);
  if (afterSeq === null) return problem(400, "Last-Event-ID / after: must be a history seq (a non-negative integer)");
  const notifier = context.notifier();
  return sseResponse(
    request,
    (signal) => executionStream({ db: context.db, notifier }, { namespaceId, workflowId: id, afterSeq }, signal),
    (error) => context.logger.error({ err: error, workflowId: id }, "execution stream failed"),
  );
}

/** A namespace-wide stream's ?namespace=: the caller must be signed in and may read it (401, 400, 404 otherwise). */
async function namespaceAccess(context: StreamContext, request: Request): Promise<{ ok: true; name: string; namespaceId: string } | { ok: false; response: Response }> {
  const principal = await authenticateRequest(context.db, request);
  if (!principal) return { ok: false, response: problem(401, "Sign in first.") };
  const name = new URL(request.url).searchParams.get("namespace")?.trim();
  if (!name) return { ok: false, response: problem(400, "namespace: the query parameter is required") };
  const verdict = await authorizeNamespace(context.db, principal, name, "read");
  if (!verdict.ok) return { ok: false, response: problem(verdict.status, verdict.message) };
  return { ok: true, name, namespaceId: verdict.namespaceId };
}

/** GET /api/executions/stream?namespace=<name> */
export async function serveNamespaceStream(context: StreamContext, request: Request): Promise<Response> {
  const access = await namespaceAccess(context, request);
  if (!access.ok) return access.response;
  const notifier = context.notifier();
  const feed = notifier === null ? null : namespaceFeedFor(context.db, notifier, context.logger);
  return sseResponse(
    request,
    (signal) => namespaceStream(feed, access.namespaceId, signal),
    (error) => context.logger.error({ err: error, namespace: access.name }, "executions list stream failed"),
  );
}

/** GET /api/inbox/stream?namespace=<name>: the namespace's human-task changes (inbox-stream.ts). */
export async function serveInboxStream(context: StreamContext, request: Request): Promise<Response> {
  const access = await namespaceAccess(context, request);
  if (!access.ok) return access.response;
  const notifier = context.notifier();
  return sseResponse(
    request,
    (signal) => inboxStream(notifier, access.namespaceId, signal),
    (error) => context.logger.error({ err: error, namespace: access.name }, "inbox stream failed"),
  );
}
