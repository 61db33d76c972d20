import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceAiProviders } from "@/components/settings/ai-providers-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "AI providers" };
export const dynamic = "force-dynamic";

export default async function AiProvidersPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader description="The model providers a namespace's AI tasks call, and the models each allows. They belong to the namespace in the switcher." title="AI providers" />
      <CurrentNamespaceAiProviders />
    </>
  );
}
