import { HydrationBoundary, dehydrate } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { cache } from "react";
import { makeQueryClient } from "@/components/query-client";

/**
 * Server components prefetch through the router directly (no HTTP hop; see
 * `requestTrpc` in console-session.ts, which carries the caller's session) into a
 * QueryClient scoped to the request by `cache`, then hand the result to the
 * client components below `HydrateClient`, which render it without a
 * loading flash and refetch through /api/trpc from then on.
 */
export const getServerQueryClient = cache(makeQueryClient);

export function HydrateClient({ children }: { children: ReactNode }) {
  return <HydrationBoundary state={dehydrate(getServerQueryClient())}>{children}</HydrationBoundary>;
}
