import type { Metadata } from "next";
import { CurrentNamespaceChip } from "@/components/current-namespace-chip";
import { dashboardQueryFrom } from "@/components/dashboard/dashboard-format";
import { CurrentNamespaceDashboard } from "@/components/dashboard/runs-dashboard";
import { PageHeader } from "@/components/page-header";
import { requireConsoleSession } from "../console-session";

export const metadata: Metadata = { title: "Dashboard" };
export const dynamic = "force-dynamic";

export default async function DashboardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireConsoleSession();
  const initial = dashboardQueryFrom(await searchParams);
  return (
    <>
      <PageHeader
        actions={<CurrentNamespaceChip />}
        description="How the namespace's runs are going: runs per minute by status, failure rate, durations and queue wait, for every workflow or one."
        title="Dashboard"
      />
      <CurrentNamespaceDashboard initial={initial} />
    </>
  );
}
