import { ConfigError } from "@/server/lib/config";
import { checkReadiness } from "@/server/web/health";
import type { Readiness } from "@/server/web/health";
import { getWebContext } from "@/server/web/web-context";

// Deliberately public: load balancers and orchestrators probe it without
// credentials. The body names migrations and the server version, never a URL
// or a secret.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const headers = { "cache-control": "no-store" };

export async function GET(): Promise<Response> {
  let readiness: Readiness;
  try {
    readiness = await checkReadiness(getWebContext().db);
  } catch (error) {
    // checkReadiness itself never throws; this is the context failing to build
    // (a bad environment). Still an answer, never a 500 with an HTML page.
    const message = error instanceof ConfigError ? error.problems.join(" ") : error instanceof Error ? error.message : String(error);
    readiness = {
      ok: false,
      database: { ok: false, error: message },
      migrations: { pending: [], unknown: [], changed: [], error: "not checked: the process is not configured" },
    };
  }
  return Response.json(readiness, { status: readiness.ok ? 200 : 503, headers });
}
