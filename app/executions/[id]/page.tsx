import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { RunSummary } from "@/components/executions/run-summary";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { requestTrpc, requireConsoleSession } from "../../console-session";
import { HydrateClient, getServerQueryClient } from "../../trpc-server";

export const metadata: Metadata = { title: "Run" };
// Reads the database on every request; nothing here can be prerendered at build time.
export const dynamic = "force-dynamic";

/**
 * One run of the namespace the console shows. A run that does not exist, or
 * belongs to a namespace other than the one shown, is the 404 page: the server
 * answers NOT_FOUND for both, so a foreign id reveals nothing.
 */
export default async function RunPage({ params }: { params: Promise<{ id: string }> }) {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const { id } = await params;
  try {
    // Awaited, so the first paint has the run; the client refreshes it from there.
    await getServerQueryClient().fetchQuery(requestTrpc.runs.get.queryOptions({ namespace, id }));
  } catch (error) {
    // BAD_REQUEST: an id that is not a UUID cannot name a run either.
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
  return (
    <HydrateClient>
      <RunSummary id={id} namespace={namespace} />
    </HydrateClient>
  );
}
