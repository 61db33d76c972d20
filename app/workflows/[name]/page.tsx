import type { Metadata } from "next";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { WorkflowEditor } from "@/components/editor/workflow-editor";
import { requireConsoleSession } from "../../console-session";
import { loadWorkflowVersion, parseVersionParam } from "../load-workflow-version";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ name: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: decodeURIComponent((await params).name) };
}

/** The editor on the latest version of a workflow, or read-only on `?version=N`. */
export default async function WorkflowEditorPage({ params, searchParams }: Params) {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const name = decodeURIComponent((await params).name);
  const requested = parseVersionParam((await searchParams).version);
  const row = await loadWorkflowVersion(namespace, name, requested);
  // Only the latest version is edited: saving always makes the next one, so
  // editing an old version would silently discard everything saved since.
  const readOnly = row.archived || row.latestVersion === null || row.version !== row.latestVersion;
  return (
    <WorkflowEditor
      key={`${name}@${row.version}`}
      initial={{ definition: row.definition, version: row.version, latestVersion: row.latestVersion, readOnly, message: row.message }}
      namespace={namespace}
    />
  );
}
