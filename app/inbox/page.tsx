import type { Metadata } from "next";
import { Suspense } from "react";
import { CurrentNamespaceChip } from "@/components/current-namespace-chip";
import { CurrentNamespaceInbox } from "@/components/inbox/inbox-view";
import { PageHeader } from "@/components/page-header";
import { requireConsoleSession } from "../console-session";

export const metadata: Metadata = { title: "Inbox" };
export const dynamic = "force-dynamic";

export default async function InboxPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader
        actions={<CurrentNamespaceChip />}
        description="Human tasks waiting for someone: yours, your groups', and the unclaimed ones you may take. Due first; the list updates as tasks arrive and close."
        title="Inbox"
      />
      {/* The tab and the open task are read from the URL (useSearchParams). */}
      <Suspense>
        <CurrentNamespaceInbox />
      </Suspense>
    </>
  );
}
