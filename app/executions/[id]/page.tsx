import { TRPCError } from "@trpc/server";
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ExecutionView } from "@/components/executions/execution-view";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { requestTrpc, requireConsoleSession } from "../../console-session";
import { getServerQueryClient } from "../../trpc-server";

export const metadata: Metadata = { title: "Run" };
// Reads the database on every request; nothing here can be prerendered at build time.
export const dynamic = "force-dynamic";

/**
 * One run of the namespace the console shows, live on its diagram. A run that
 * does not exist, or belongs to a namespace other than the one shown, is the
 * 404 page: the server answers NOT_FOUND for both, so a foreign id reveals nothing.
 */
export default async function RunPage({ params }: { params: Promise<{ id: string }> }) {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const { id } = await params;
  try {
    // The snapshot the stream continues from: the page resumes at its lastSeq.
    const initial = await getServerQueryClient().fetchQuery(requestTrpc.executions.get.queryOptions({ namespace, id }));
    return <ExecutionView key={id} initial={initial} namespace={namespace} />;
  } catch (error) {
    // BAD_REQUEST: an id that is not a UUID cannot name a run either.
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
}
