import { Chip } from "@heroui/react";
import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { WorkflowList } from "@/components/workflow-list";
import { HydrateClient, getServerQueryClient, serverTrpc } from "../trpc-server";

export const metadata: Metadata = { title: "Workflows" };
// Reads the database on every request; nothing here can be prerendered at build time.
export const dynamic = "force-dynamic";

const NAMESPACE = "default";

export default async function WorkflowsPage() {
  // Awaited so the first paint has the rows; a failure is swallowed here and
  // surfaces in the client component, which retries through /api/trpc.
  await getServerQueryClient().prefetchQuery(serverTrpc.workflows.list.queryOptions({ namespace: NAMESPACE }));
  return (
    <HydrateClient>
      <PageHeader
        actions={
          <Chip size="sm" variant="soft">
            Namespace: {NAMESPACE}
          </Chip>
        }
        description="Every workflow definition, at its latest version. Saving a workflow creates a new version; runs keep the version they started with."
        title="Workflows"
      />
      <WorkflowList namespace={NAMESPACE} />
    </HydrateClient>
  );
}
