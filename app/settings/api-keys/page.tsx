import { Chip } from "@heroui/react";
import type { Metadata } from "next";
import Link from "next/link";
import { ArrowLeftIcon } from "@/components/icons";
import { PageHeader } from "@/components/page-header";
import { ApiKeysPanel } from "@/components/settings/api-keys-panel";
import { ServiceAccountsPanel } from "@/components/settings/service-accounts-panel";

export const metadata: Metadata = { title: "API keys" };
// Reads the database on every request through the client; nothing here can be prerendered.
export const dynamic = "force-dynamic";

/** Namespace names are slugs (Namespaces "name" CHECK); anything else falls back rather than reaching the query. */
const NAMESPACE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export default async function ApiKeysPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { ns } = await searchParams;
  const namespace = typeof ns === "string" && NAMESPACE_NAME.test(ns) ? ns : "default";
  // No server prefetch: the list needs the caller's session, and the panels
  // show their own loading and error states while the client fetches it.
  return (
    <>
      <Link className="mb-4 inline-flex items-center gap-1.5 text-sm text-muted hover:text-foreground" href="/settings">
        <ArrowLeftIcon className="size-4" />
        Settings
      </Link>
      <PageHeader
        actions={
          <Chip size="sm" variant="soft">
            Namespace: {namespace}
          </Chip>
        }
        description="Keys let remote workers and scripts call the REST API of one namespace. A key is shown once, when it is created; only its hash is stored."
        title="API keys"
      />
      <div className="flex flex-col gap-6">
        <ApiKeysPanel namespace={namespace} />
        <ServiceAccountsPanel namespace={namespace} />
      </div>
    </>
  );
}
