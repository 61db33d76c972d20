import { QueryClient, defaultShouldDehydrateQuery } from "@tanstack/react-query";

/**
 * One factory for the browser's QueryClient and the per-request one that
 * server components prefetch into. No "use client": both sides import it.
 */
export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Above zero, so data a server component prefetched is not refetched the moment it hydrates.
        staleTime: 30_000,
        refetchOnWindowFocus: true,
      },
      dehydrate: {
        // Also hand over queries still in flight, so a prefetch that is not awaited streams in.
        shouldDehydrateQuery: (query) => defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
    },
  });
}
