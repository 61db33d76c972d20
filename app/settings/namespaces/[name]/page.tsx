import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ArrowLeftIcon } from "@/components/icons";
import { PageHeader } from "@/components/page-header";
import { NamespaceMembersPanel } from "@/components/settings/namespace-members-panel";
import { NotPermitted } from "@/components/settings/section-card";
import { requestTrpc, requireConsoleSession } from "../../../console-session";
import { HydrateClient, getServerQueryClient } from "../../../trpc-server";

export const metadata: Metadata = { title: "Namespace members" };
export const dynamic = "force-dynamic";

export default async function NamespaceMembersPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const { namespaces } = await requireConsoleSession();
  const namespace = namespaces.find((n) => n.name === name);
  // Like the server: a namespace this user cannot see does not exist for them.
  if (!namespace) notFound();
  const back = (
    <Link className="mb-4 inline-flex items-center gap-1.5 text-sm text-muted hover:text-foreground" href="/settings/namespaces">
      <ArrowLeftIcon className="size-4" />
      Namespaces
    </Link>
  );
  const header = <PageHeader description={namespace.description ?? "Who has a role in this namespace."} title={namespace.name} />;
  if (namespace.role !== "admin") {
    return (
      <>
        {back}
        {header}
        <NotPermitted title="Only an admin of this namespace manages its members">
          Your role here is {namespace.role ?? "none"}. An admin of {namespace.name}, or an owner, can add and remove members.
        </NotPermitted>
      </>
    );
  }
  await getServerQueryClient().prefetchQuery(requestTrpc.namespaces.members.list.queryOptions({ namespace: name }));
  return (
    <HydrateClient>
      {back}
      {header}
      <NamespaceMembersPanel namespace={name} />
    </HydrateClient>
  );
}
