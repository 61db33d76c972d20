import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { NotPermitted } from "@/components/settings/section-card";
import { UsersPanel } from "@/components/settings/users-panel";
import { MIN_PASSWORD_LENGTH } from "@/server/auth/password-policy";
import { requestTrpc, requireConsoleSession } from "../../console-session";
import { HydrateClient, getServerQueryClient } from "../../trpc-server";

export const metadata: Metadata = { title: "Users" };
export const dynamic = "force-dynamic";

export default async function UsersPage() {
  const { user } = await requireConsoleSession();
  const header = <PageHeader description="Who can sign in to this installation. Namespaces say what each of them may do." title="Users" />;
  if (!user.isOwner) {
    return (
      <>
        {header}
        <NotPermitted title="Only an owner manages users">Ask an owner of this installation to add or disable users.</NotPermitted>
      </>
    );
  }
  await getServerQueryClient().prefetchQuery(requestTrpc.users.list.queryOptions());
  return (
    <HydrateClient>
      {header}
      <UsersPanel minPasswordLength={MIN_PASSWORD_LENGTH} />
    </HydrateClient>
  );
}
