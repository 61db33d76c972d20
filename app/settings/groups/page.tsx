import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceGroups } from "@/components/settings/current-namespace-groups";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Groups" };
export const dynamic = "force-dynamic";

export default async function GroupsPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader description="Groups give the same roles in a namespace to everyone in them. They belong to the namespace in the switcher." title="Groups" />
      <CurrentNamespaceGroups />
    </>
  );
}
