import type { Metadata } from "next";
import { CurrentNamespaceChip } from "@/components/current-namespace-chip";
import { CurrentNamespaceExecutions } from "@/components/executions/executions-list";
import { filtersFromQuery } from "@/components/executions/run-filters-query";
import { PageHeader } from "@/components/page-header";
import { requireConsoleSession } from "../console-session";

export const metadata: Metadata = { title: "Executions" };
export const dynamic = "force-dynamic";

export default async function ExecutionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireConsoleSession();
  const initial = filtersFromQuery(await searchParams);
  return (
    <>
      <PageHeader
        actions={<CurrentNamespaceChip />}
        description="Runs of your workflows, newest first; new runs and status changes appear as they happen. Open one to watch it on its diagram."
        title="Executions"
      />
      <CurrentNamespaceExecutions initial={initial} />
    </>
  );
}
