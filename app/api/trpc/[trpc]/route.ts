import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { checkedTrpcRequest } from "@/server/trpc/checked-request";
import { createTrpcContext } from "@/server/trpc/context";
import { appRouter } from "@/server/trpc/routers/_app";
import { getWebContext } from "@/server/web/web-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// Not public as a route: every procedure behind it is protected unless marked
// public one by one (server/trpc/init.ts), which default-deny.int.test.ts checks.
async function handler(request: Request): Promise<Response> {
  const req = await checkedTrpcRequest(request);
  if (req instanceof Response) return req;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: ({ resHeaders }) => {
      const { db, config, blobs } = getWebContext();
      return createTrpcContext({ db, config, blobs, request: req, resHeaders });
    },
    onError({ path, error }) {
      if (error.code !== "INTERNAL_SERVER_ERROR") return;
      // The cause only, never the input: sign-in and setup inputs hold passwords.
      const cause = error.cause ?? error;
      try {
        getWebContext().logger.error({ err: cause, path: path ?? null }, "tRPC procedure failed");
      } catch {
        console.error(`tRPC ${path ?? "<no path>"} failed:`, cause);
      }
    },
  });
}

export { handler as GET, handler as POST };
