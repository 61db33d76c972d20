import type { Metadata } from "next";
import { CurrentNamespaceChip } from "@/components/current-namespace-chip";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceWorkflowList } from "@/components/workflow-list";
import { requireConsoleSession, requestTrpc } from "../console-session";
import { HydrateClient, getServerQueryClient } from "../trpc-server";

export const metadata: Metadata = { title: "Workflows" };
// Reads the database on every request; nothing here can be prerendered at build time.
export const dynamic = "force-dynamic";

export default async function WorkflowsPage() {
  const { namespace } = await requireConsoleSession();
  // Awaited so the first paint has the rows; a failure is swallowed here and
  // surfaces in the client component, which retries through /api/trpc.
  if (namespace) await getServerQueryClient().prefetchQuery(requestTrpc.workflows.list.queryOptions({ namespace }));
  return (
    <HydrateClient>
      <PageHeader
        actions={<CurrentNamespaceChip />}
        description="Every workflow definition, at its latest version. Saving a workflow creates a new version; runs keep the version they started with."
        title="Workflows"
      />
      <CurrentNamespaceWorkflowList />
    </HydrateClient>
  );
}
