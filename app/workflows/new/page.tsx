import type { Metadata } from "next";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { WorkflowEditor } from "@/components/editor/workflow-editor";
import { findWorkflowTemplate } from "@/engine";
import type { WorkflowDefinition } from "@/engine";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "New workflow" };
export const dynamic = "force-dynamic";

/** A blank canvas, or a copy of a template (`?template=<id>`). Nothing is stored until the first save. */
export default async function NewWorkflowPage({ searchParams }: { searchParams: Promise<{ template?: string | string[] }> }) {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const { template } = await searchParams;
  // An unknown template id opens the blank canvas: the gallery only links ids it lists.
  const chosen = typeof template === "string" ? findWorkflowTemplate(template) : undefined;
  const definition: WorkflowDefinition = chosen ? structuredClone(chosen.definition) : { schemaVersion: 1, name: "untitled-workflow", nodes: [], edges: [] };
  return <WorkflowEditor initial={{ definition, version: null, latestVersion: null, readOnly: false, message: null }} namespace={namespace} />;
}
