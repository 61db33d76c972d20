"use client";

import { Button, FieldError, Form, Input, Label, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useConsoleSession } from "../console-session";
import { routeMatching, useFormErrors } from "../form-errors";
import { pluralize } from "../format";
import { UsersIcon } from "../icons";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { RoleSelect } from "./role-select";
import { LoadError, SectionCard } from "./section-card";

// "No user has the email …" is about the email field.
const ABOUT_EMAIL = routeMatching(/email/i, "email");

type Member = inferRouterOutputs<AppRouter>["namespaces"]["members"]["list"][number];

/**
 * The direct members of one namespace and their roles (admins only). Roles
 * that come from groups are managed under Groups; a user's effective role is
 * the strongest of the two.
 */
export function NamespaceMembersPanel({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { user: me } = useConsoleSession();
  const input = { namespace };
  const members = useQuery(trpc.namespaces.members.list.queryOptions(input));
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<NamespaceRole>("viewer");
  const [removing, setRemoving] = useState<Member | null>(null);

  const invalidate = async () => {
    await queryClient.invalidateQueries(trpc.namespaces.members.list.queryFilter(input));
    // The signed-in user's own role may have changed with it.
    await queryClient.invalidateQueries(trpc.namespaces.list.pathFilter());
  };
  const add = useMutation(
    trpc.namespaces.members.set.mutationOptions({
      onSuccess: async () => {
        setEmail("");
        await invalidate();
      },
    }),
  );
  const change = useMutation(trpc.namespaces.members.set.mutationOptions({ onSuccess: invalidate }));
  const remove = useMutation(
    trpc.namespaces.members.remove.mutationOptions({
      onSuccess: async () => {
        setRemoving(null);
        await invalidate();
      },
    }),
  );

  const addErrors = useFormErrors(add.error, ABOUT_EMAIL);

  const columns: DataTableColumn<Member>[] = [
    {
      id: "user",
      header: "User",
      isRowHeader: true,
      cell: (member) => (
        <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
          <span className={`truncate font-medium ${member.disabled ? "text-muted" : "text-foreground"}`}>
            {member.displayName || member.email}
            {member.userId === me.id ? <span className="font-normal text-muted"> (you)</span> : null}
          </span>
          <span className="truncate text-xs text-muted">
            {member.displayName ? member.email : null}
            {member.disabled ? `${member.displayName ? " · " : ""}disabled` : null}
          </span>
        </div>
      ),
    },
    {
      id: "role",
      header: "Role",
      className: "w-36 sm:w-44",
      cell: (member) => (
        <RoleSelect
          ariaLabel={`Role of ${member.email}`}
          isDisabled={change.isPending && change.variables.email === member.email}
          value={member.role}
          onChange={(next) => change.mutate({ namespace, email: member.email, role: next })}
        />
      ),
    },
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-24 text-right",
      cell: (member) => (
        <div className="flex justify-end">
          <Button
            aria-label={`Remove ${member.email}`}
            size="sm"
            variant="danger-soft"
            onPress={() => {
              remove.reset();
              setRemoving(member);
            }}
          >
            Remove
          </Button>
        </div>
      ),
    },
  ];

  return (
    <SectionCard
      description={
        <>
          People with a role in <span className="font-medium text-foreground">{namespace}</span>. Groups can grant roles too.
        </>
      }
      icon={<UsersIcon className="size-[18px]" />}
      id="members"
      title="Members"
    >
      <Form
        aria-label="Add a member"
        className="flex flex-col gap-3 border-b border-separator px-5 py-4 sm:flex-row sm:items-start"
        validationErrors={addErrors.fields}
        onSubmit={(event) => {
          event.preventDefault();
          add.mutate({ namespace, email: email.trim(), role });
        }}
      >
        <TextField className="min-w-0 flex-1" isRequired name="email" type="email" value={email} onChange={setEmail}>
          <Label>Email</Label>
          <Input autoComplete="off" placeholder="grace@example.com" />
          <FieldError />
        </TextField>
        <RoleSelect className="sm:w-40" label="Role" name="role" value={role} onChange={setRole} />
        <Button className="sm:mt-6" isPending={add.isPending} type="submit">
          {add.isPending ? "Adding…" : "Add member"}
        </Button>
      </Form>
      {addErrors.form ? (
        <p className="px-5 pt-3 text-sm text-danger" role="alert">
          {addErrors.form}
        </p>
      ) : null}

      {members.isError && !members.data ? (
        <LoadError message={members.error.message} what="Members" onRetry={() => void members.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={
            <EmptyState compact title="No direct members yet">
              Add people by the email they sign in with. Owners are admins here without being members.
            </EmptyState>
          }
          footer={`${pluralize(members.data?.length ?? 0, "member")} in ${namespace}`}
          label={`Members of ${namespace}`}
          loadingLabel="Loading members"
          rowKey={(member) => member.userId}
          rows={members.data}
        />
      )}
      {change.isError ? (
        <p className="px-5 pb-4 text-sm text-danger" role="alert">
          The role was not changed: {change.error.message}
        </p>
      ) : null}

      <ConfirmDialog
        confirmLabel="Remove member"
        error={remove.error?.message ?? null}
        isOpen={removing !== null}
        isPending={remove.isPending}
        pendingLabel="Removing…"
        title={`Remove ${removing?.email ?? ""} from ${namespace}?`}
        onConfirm={() => removing && remove.mutate({ namespace, userId: removing.userId })}
        onOpenChange={(open) => (open ? undefined : setRemoving(null))}
      >
        <p>They lose their direct role here at once. Roles they hold through groups stay until they leave those groups.</p>
      </ConfirmDialog>
    </SectionCard>
  );
}
