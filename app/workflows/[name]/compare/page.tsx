import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { NoNamespacePanel } from "@/components/no-namespace-panel";
import { VersionCompare } from "@/components/editor/version-compare";
import { requireConsoleSession } from "../../../console-session";
import { loadWorkflowVersion, parseVersionParam } from "../../load-workflow-version";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ name: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `Compare · ${decodeURIComponent((await params).name)}` };
}

/** Two versions on one canvas: `?from=2&to=5`. */
export default async function CompareVersionsPage({ params, searchParams }: Params) {
  const { namespace } = await requireConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  const name = decodeURIComponent((await params).name);
  const query = await searchParams;
  const from = parseVersionParam(query.from);
  const to = parseVersionParam(query.to);
  if (from === undefined || to === undefined) notFound();
  const [a, b] = await Promise.all([loadWorkflowVersion(namespace, name, from), loadWorkflowVersion(namespace, name, to)]);
  return <VersionCompare from={{ version: a.version, definition: a.definition }} name={name} to={{ version: b.version, definition: b.definition }} />;
}
