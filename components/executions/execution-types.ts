import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/routers/_app";

/**
 * One run as `executions.get` returns it. Kept apart from the view and the
 * side panel so that the panel can name it without importing the view that
 * renders the panel.
 */
export type ExecutionDetail = inferRouterOutputs<AppRouter>["executions"]["get"];
