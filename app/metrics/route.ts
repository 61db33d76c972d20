import { authenticateRequest } from "@/server/auth/authenticate";
import { isScrapeAuthorized, processMetrics } from "@/server/lib/metrics";
import { getWebContext } from "@/server/web/web-context";
import type { WebContext } from "@/server/web/web-context";

// The web process's metrics (its process figures plus the database gauges:
// queue names and depths of every namespace). An instance-wide view, so on the
// web port it is not anonymous: a scrape sends NODE_FLOW_METRICS_TOKEN as a
// Bearer token, or comes from the owner's signed-in browser. An API key, even
// an admin one, is refused: it belongs to one namespace and would see the
// others' queues. Anonymous scraping is the sidecar's metrics port's job
// (NODE_FLOW_METRICS_PORT, server/sidecar/metrics-server.ts), a port kept off
// the public network.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const text = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

export async function GET(request: Request): Promise<Response> {
  let context: WebContext;
  try {
    context = getWebContext();
  } catch {
    // Without a valid config we cannot know whether a token is required, so
    // this fails closed rather than serving metrics that may be meant private.
    return new Response("metrics unavailable: the process is not configured\n", { status: 503, headers: text });
  }
  const { metricsToken } = context.config;
  const byToken = metricsToken !== undefined && metricsToken !== "" && isScrapeAuthorized(request.headers.get("authorization"), metricsToken);
  if (!byToken) {
    const principal = await authenticateRequest(context.db, request);
    if (principal === null) {
      return new Response(
        "unauthorized: send NODE_FLOW_METRICS_TOKEN as a Bearer token, sign in as the owner, or scrape the sidecar's metrics port (NODE_FLOW_METRICS_PORT)\n",
        { status: 401, headers: { ...text, "www-authenticate": 'Bearer realm="metrics"' } },
      );
    }
    if (!(principal.kind === "user" && principal.isOwner)) {
      return new Response("forbidden: /metrics covers every namespace; only the owner or NODE_FLOW_METRICS_TOKEN may read it here\n", { status: 403, headers: text });
    }
  }
  const scrape = await processMetrics().scrape({ db: context.db });
  return new Response(scrape.body, { headers: { "content-type": scrape.contentType, "cache-control": "no-store" } });
}
