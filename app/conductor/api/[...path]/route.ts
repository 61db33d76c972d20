import { conductorDepsOf } from "@/server/conductor/conductor-deps";
import { CONDUCTOR_ROUTES } from "@/server/conductor/conductor-routes";
import { dispatchConductorRequest } from "@/server/conductor/dispatch-conductor-request";
import { getWebContext } from "@/server/web/web-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// Conductor's REST API at /conductor/api, so a Conductor client configured
// with http://host:3000/conductor/api works unchanged. One catch-all: the
// table in server/conductor/conductor-routes.ts is the only place a route
// exists, and the default-deny test enumerates it.
function handler(request: Request): Promise<Response> {
  return dispatchConductorRequest(() => conductorDepsOf(getWebContext()), request, CONDUCTOR_ROUTES);
}

export { handler as DELETE, handler as GET, handler as POST, handler as PUT };
