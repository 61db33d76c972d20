import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceSecrets } from "@/components/settings/secrets-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Secrets" };
export const dynamic = "force-dynamic";

export default async function SecretsPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader description="Write-only values a namespace's webhooks and status listeners are signed with and its tasks read as ${workflow.secrets.NAME}. They belong to the namespace in the switcher." title="Secrets" />
      <CurrentNamespaceSecrets />
    </>
  );
}
