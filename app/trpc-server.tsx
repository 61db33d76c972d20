import { HydrationBoundary, dehydrate } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import type { ReactNode } from "react";
import { cache } from "react";
import { makeQueryClient } from "@/components/query-client";
import { appRouter } from "@/server/trpc/routers/_app";
import { getWebContext } from "@/server/web-context";

/**
 * Server components prefetch through the router directly (no HTTP hop) into a
 * QueryClient scoped to the request by `cache`, then hand the result to the
 * client components below `HydrateClient`, which render it without a
 * loading flash and refetch through /api/trpc from then on.
 */
export const getServerQueryClient = cache(makeQueryClient);

export const serverTrpc = createTRPCOptionsProxy({
  ctx: () => getWebContext(),
  router: appRouter,
  queryClient: getServerQueryClient,
});

export function HydrateClient({ children }: { children: ReactNode }) {
  return <HydrationBoundary state={dehydrate(getServerQueryClient())}>{children}</HydrationBoundary>;
}
