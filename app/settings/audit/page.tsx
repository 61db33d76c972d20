import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CurrentNamespaceAuditLog } from "@/components/settings/audit-log-panel";
import { requireConsoleSession } from "../../console-session";

export const metadata: Metadata = { title: "Audit log" };
// Reads the database on every request through the client; nothing here can be prerendered.
export const dynamic = "force-dynamic";

export default async function AuditPage() {
  await requireConsoleSession();
  // No server prefetch: the log needs the caller's session and the switcher's
  // namespace, and the panel shows its own loading and error states.
  return (
    <>
      <PageHeader
        description="Every change to definitions, credentials, members and runs, with who made it and when. Secrets and definition bodies are never recorded."
        title="Audit"
      />
      <CurrentNamespaceAuditLog />
    </>
  );
}
