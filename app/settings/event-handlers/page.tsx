import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceEventHandlers } from "@/components/settings/event-handlers-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Event handlers" };
export const dynamic = "force-dynamic";

export default async function EventHandlersPage() {
  await requireConsoleSession();
  return (
    <>
      <PageHeader
        description="What the namespace in the switcher does on an event, and which URLs it calls when a run changes status."
        title="Event handlers"
      />
      <CurrentNamespaceEventHandlers />
    </>
  );
}
