import { isScrapeAuthorized, processMetrics } from "@/server/lib/metrics";
import { getWebContext } from "@/server/web/web-context";
import type { WebContext } from "@/server/web/web-context";

// Public unless NODE_FLOW_METRICS_TOKEN is set (then a Bearer token is
// required): it shows queue names and counts, nothing secret. The web process
// holds no loops, so this is its process metrics plus the database gauges; the
// sidecar serves its engine counters on its own port (server/sidecar/metrics-server.ts).
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
  if (!isScrapeAuthorized(request.headers.get("authorization"), context.config.metricsToken)) {
    return new Response("unauthorized\n", { status: 401, headers: { ...text, "www-authenticate": 'Bearer realm="metrics"' } });
  }
  const scrape = await processMetrics().scrape({ db: context.db });
  return new Response(scrape.body, { headers: { "content-type": scrape.contentType, "cache-control": "no-store" } });
}
