import type { Metadata } from "next";
import { EmptyStatePanel } from "@/components/empty-state-panel";
import { ExecutionsIllustration } from "@/components/illustrations";
import { PageHeader } from "@/components/page-header";

export const metadata: Metadata = { title: "Executions" };

export default function ExecutionsPage() {
  return (
    <>
      <PageHeader description="Runs of your workflows: what is running, what finished and what failed." title="Executions" />
      <EmptyStatePanel
        illustration={<ExecutionsIllustration />}
        title="Executions will appear here"
        upcoming={[
          { title: "Every run, newest first", detail: "Status, workflow and version, when it started and how long it took." },
          { title: "Filter what matters", detail: "Running, failed or completed; by workflow or by correlation id." },
          { title: "Live on the diagram", detail: "Open a run to watch its tasks light up on the same canvas it was designed on." },
        ]}
      >
        Starting workflows is not available in this build yet, so there is nothing to list. Once runs can be started, each one
        shows up here as it begins.
      </EmptyStatePanel>
    </>
  );
}
