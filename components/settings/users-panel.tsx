"use client";

import { Alert, Button, Chip, CloseButton } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useConsoleSession } from "../console-session";
import { pluralize } from "../format";
import { PlusIcon, UsersIcon } from "../icons";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { CreateUserDialog } from "./create-user-dialog";
import type { CreatedUser } from "./create-user-dialog";
import { LoadError, SectionCard } from "./section-card";

type UserSummary = inferRouterOutputs<AppRouter>["users"]["list"][number];

/** Settings → Users (owners only): everyone who can sign in; add users, disable and enable them. */
export function UsersPanel({ minPasswordLength }: { minPasswordLength: number }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user: me } = useConsoleSession();
  const users = useQuery(trpc.users.list.queryOptions());
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedUser | null>(null);
  const [disabling, setDisabling] = useState<UserSummary | null>(null);

  const setDisabled = useMutation(
    trpc.users.setDisabled.mutationOptions({
      onSuccess: async () => {
        setDisabling(null);
        await queryClient.invalidateQueries(trpc.users.list.pathFilter());
      },
    }),
  );

  const disabledCount = users.data?.filter((u) => u.disabled).length ?? 0;

  const columns: DataTableColumn<UserSummary>[] = [
    {
      id: "user",
      header: "User",
      isRowHeader: true,
      cell: (user) => (
        <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
          <span className={`truncate font-medium ${user.disabled ? "text-muted" : "text-foreground"}`}>
            {user.displayName || user.email}
            {user.id === me.id ? <span className="font-normal text-muted"> (you)</span> : null}
          </span>
          {user.displayName ? <span className="truncate text-xs text-muted">{user.email}</span> : null}
          <span className="flex flex-wrap gap-1 md:hidden">
            <span className="sm:hidden">
              <RoleChip user={user} />
            </span>
            <StatusChip user={user} />
          </span>
        </div>
      ),
    },
    { id: "role", header: "Role", hiddenBelow: "sm", className: "w-28", cell: (user) => <RoleChip user={user} /> },
    { id: "status", header: "Status", hiddenBelow: "md", className: "w-28", cell: (user) => <StatusChip user={user} /> },
    {
      id: "last-sign-in",
      header: "Last sign-in",
      hiddenBelow: "lg",
      className: "w-36",
      cell: (user) =>
        user.lastLoginAt ? (
          <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={user.lastLoginAt} />
        ) : (
          <span className="text-sm text-muted">Never</span>
        ),
    },
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-28 text-right",
      // Nobody disables themselves: it would lock the last owner out.
      cell: (user) =>
        user.id === me.id ? null : user.disabled ? (
          <div className="flex justify-end">
            <Button
              aria-label={`Enable ${user.email}`}
              isPending={setDisabled.isPending && setDisabled.variables.userId === user.id}
              size="sm"
              variant="secondary"
              onPress={() => setDisabled.mutate({ userId: user.id, disabled: false })}
            >
              Enable
            </Button>
          </div>
        ) : (
          <div className="flex justify-end">
            <Button
              aria-label={`Disable ${user.email}`}
              size="sm"
              variant="danger-soft"
              onPress={() => {
                setDisabled.reset();
                setDisabling(user);
              }}
            >
              Disable
            </Button>
          </div>
        ),
    },
  ];

  return (
    <SectionCard
      actions={
        <Button size="sm" onPress={() => setCreating(true)}>
          <PlusIcon className="size-4" />
          Add user
        </Button>
      }
      description="Everyone who can sign in. A disabled user is signed out everywhere and cannot sign in until enabled again."
      icon={<UsersIcon className="size-[18px]" />}
      id="users"
      title="Users"
    >
      {created ? (
        <div className="border-b border-separator p-5">
          <Alert role="status" status="success">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>{created.email} can now sign in</Alert.Title>
              <Alert.Description>
                Give them the initial password you set. They see no namespace until you add them to one in{" "}
                <Link className="font-medium underline underline-offset-2" href="/settings/namespaces">
                  Namespaces
                </Link>
                .
              </Alert.Description>
            </Alert.Content>
            <CloseButton aria-label="Dismiss" onPress={() => setCreated(null)} />
          </Alert>
        </div>
      ) : null}

      {users.isError && !users.data ? (
        <LoadError message={users.error.message} what="Users" onRetry={() => void users.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          footer={
            <>
              {pluralize(users.data?.length ?? 0, "user")}
              {disabledCount > 0 ? ` · ${disabledCount} disabled` : ""}
            </>
          }
          label="Users"
          loadingLabel="Loading users"
          rowKey={(user) => user.id}
          rows={users.data}
        />
      )}

      {setDisabled.isError && !disabling ? (
        <p className="px-5 pb-4 text-sm text-danger" role="alert">
          {setDisabled.error.message}
        </p>
      ) : null}

      <CreateUserDialog isOpen={creating} minPasswordLength={minPasswordLength} onCreated={setCreated} onOpenChange={setCreating} />

      <ConfirmDialog
        confirmLabel="Disable user"
        error={disabling ? (setDisabled.error?.message ?? null) : null}
        isOpen={disabling !== null}
        isPending={setDisabled.isPending}
        pendingLabel="Disabling…"
        title={`Disable ${disabling?.email ?? ""}?`}
        onConfirm={() => disabling && setDisabled.mutate({ userId: disabling.id, disabled: true })}
        onOpenChange={(open) => (open ? undefined : setDisabling(null))}
      >
        <p>Their sessions end at once and they cannot sign in. API keys they own stop working too. You can enable them again later.</p>
      </ConfirmDialog>
    </SectionCard>
  );
}

function RoleChip({ user }: { user: UserSummary }) {
  return user.isOwner ? (
    <Chip color="accent" size="sm" variant="soft">
      Owner
    </Chip>
  ) : (
    <Chip size="sm" variant="soft">
      Member
    </Chip>
  );
}

function StatusChip({ user }: { user: UserSummary }) {
  return user.disabled ? (
    <Chip color="danger" size="sm" variant="soft">
      Disabled
    </Chip>
  ) : (
    <Chip color="success" size="sm" variant="soft">
      Active
    </Chip>
  );
}
