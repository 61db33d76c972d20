import type { Metadata } from "next";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { WorkflowEditor } from "@/components/editor/workflow-editor";
import type { WorkflowDefinition } from "@/engine";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "New workflow" };
export const dynamic = "force-dynamic";

/** A blank canvas. Nothing is stored until the first save. */
export default async function NewWorkflowPage() {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const definition: WorkflowDefinition = { schemaVersion: 1, name: "untitled-workflow", nodes: [], edges: [] };
  return <WorkflowEditor initial={{ definition, version: null, latestVersion: null, readOnly: false, message: null }} namespace={namespace} />;
}
