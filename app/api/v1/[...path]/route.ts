import { dispatchRestRequest } from "@/server/rest/dispatch";
import { restDepsOf } from "@/server/rest/rest-deps";
import { ROUTES } from "@/server/rest/routes";
import { getWebContext } from "@/server/web/web-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// One catch-all for /api/v1: the route table in server/rest/routes.ts is the
// only place a route exists, so the OpenAPI document and the default-deny test
// see every one. Authentication is per route there, default-deny.
function handler(request: Request): Promise<Response> {
  return dispatchRestRequest(() => restDepsOf(getWebContext()), request, ROUTES);
}

export { handler as DELETE, handler as GET, handler as PATCH, handler as POST, handler as PUT };
