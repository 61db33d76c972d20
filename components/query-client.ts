import { QueryCache, QueryClient, defaultShouldDehydrateQuery, isServer } from "@tanstack/react-query";
import { signInPath } from "./auth-routes";

function errorCode(error: unknown): unknown {
  return (error as { data?: { code?: unknown } | null } | null)?.data?.code;
}

// Asking again cannot change these answers; retrying would only delay the message (or the sign-in page) by seconds.
const FINAL_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "BAD_REQUEST", "CONFLICT"]);

/**
 * A query refused as UNAUTHORIZED means the session ended under the page
 * (expired, revoked, signed out in another tab): go and sign in again, then
 * come back. Mutations are left alone — a failed sign-in is UNAUTHORIZED too,
 * and its form shows that error itself.
 */
function onQueryError(error: unknown): void {
  if (typeof window === "undefined") return;
  if (errorCode(error) === "UNAUTHORIZED") window.location.assign(signInPath(`${window.location.pathname}${window.location.search}`));
}

/**
 * One factory for the browser's QueryClient and the per-request one that
 * server components prefetch into. No "use client": both sides import it.
 */
export function makeQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: onQueryError }),
    defaultOptions: {
      queries: {
        // Above zero, so data a server component prefetched is not refetched the moment it hydrates.
        staleTime: 30_000,
        refetchOnWindowFocus: true,
        // The server never retries (React Query's own default there): a page render must not wait out backoffs.
        retry: isServer ? false : (failures, error) => failures < 3 && !FINAL_CODES.has(String(errorCode(error))),
      },
      dehydrate: {
        // Also hand over queries still in flight, so a prefetch that is not awaited streams in.
        shouldDehydrateQuery: (query) => defaultShouldDehydrateQuery(query) || query.state.status === "pending",
      },
    },
  });
}
