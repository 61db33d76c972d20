import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { NamespacesPanel } from "@/components/settings/namespaces-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Namespaces" };
export const dynamic = "force-dynamic";

export default async function NamespacesPage() {
  // The list itself arrives with the console session (namespaces.list, in the shell).
  await requireConsoleSession();
  return (
    <>
      <PageHeader
        description="Each namespace holds its own workflows, runs, tasks and API keys. Roles are per namespace: viewer, operator, editor, admin."
        title="Namespaces"
      />
      <NamespacesPanel />
    </>
  );
}
