import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceVariables } from "@/components/settings/variables-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Variables" };
export const dynamic = "force-dynamic";

export default async function VariablesPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader description="Plain configuration a namespace's workflows read as ${workflow.env.NAME}. They belong to the namespace in the switcher." title="Variables" />
      <CurrentNamespaceVariables />
    </>
  );
}
