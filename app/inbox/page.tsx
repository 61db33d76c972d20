import type { Metadata } from "next";
import { EmptyStatePanel } from "@/components/empty-state-panel";
import { InboxIllustration } from "@/components/illustrations";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "Inbox" };

export default function InboxPage() {
  return (
    <>
      <PageHeader description="Human tasks waiting for someone to act on them." title="Inbox" />
      <EmptyStatePanel
        illustration={<InboxIllustration />}
        title="Nothing waiting for you"
        upcoming={[
          { title: "Tasks as forms", detail: "When a run reaches a human task, its form appears here to fill in and submit." },
          { title: "Claim and hand back", detail: "Take a task so nobody else works on it, or release it for someone else." },
          { title: "The run continues", detail: "Completing a task hands its output to the workflow, which moves on by itself." },
        ]}
      >
        Human tasks do not exist in this build yet. When a workflow pauses for a person, the task lands here.
      </EmptyStatePanel>
    </>
  );
}
