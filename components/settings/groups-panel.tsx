"use client";

import { Button, Chip, CloseButton, FieldError, Form, Input, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { routeMatching, useFormErrors } from "../form-errors";
import { pluralize } from "../format";
import { GroupIcon, PlusIcon } from "../icons";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { EmptyState } from "../ui/empty-state";
import { SkeletonRows } from "../ui/skeleton-rows";
import { CreateGroupDialog, GroupRolesDialog } from "./group-dialogs";
import { roleLabel } from "./role-options";
import { LoadError, SectionCard } from "./section-card";

// "No user has the email …" is about the email typed; anything else is about the group.
const ABOUT_EMAIL = routeMatching(/email/i, "email");

type Group = inferRouterOutputs<AppRouter>["groups"]["list"][number];
type GroupMember = Group["members"][number];

type Pending = { kind: "delete"; group: Group } | { kind: "remove"; group: Group; member: GroupMember };

/** Settings → Groups of one namespace (admins): people who share roles there. */
export function GroupsPanel({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const groups = useQuery(trpc.groups.list.queryOptions({ namespace }));
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Group | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);

  const invalidate = async () => {
    await queryClient.invalidateQueries(trpc.groups.list.pathFilter());
    await queryClient.invalidateQueries(trpc.namespaces.list.pathFilter());
  };
  const remove = useMutation(
    trpc.groups.delete.mutationOptions({
      onSuccess: async () => {
        setPending(null);
        await invalidate();
      },
    }),
  );
  const removeMember = useMutation(
    trpc.groups.removeMember.mutationOptions({
      onSuccess: async () => {
        setPending(null);
        await invalidate();
      },
    }),
  );
  const confirmError = pending?.kind === "delete" ? remove.error : pending?.kind === "remove" ? removeMember.error : null;

  return (
    <SectionCard
      actions={
        <Button size="sm" onPress={() => setCreating(true)}>
          <PlusIcon className="size-4" />
          Create group
        </Button>
      }
      description={
        <>
          Groups in <span className="font-medium text-foreground">{namespace}</span>. Every member gets the group&apos;s roles there.
        </>
      }
      icon={<GroupIcon className="size-[18px]" />}
      id="groups"
      title="Groups"
    >
      {groups.isError && !groups.data ? (
        <LoadError message={groups.error.message} what="Groups" onRetry={() => void groups.refetch()} />
      ) : groups.isPending ? (
        <SkeletonRows label="Loading groups" />
      ) : groups.data.length === 0 ? (
        <EmptyState
          action={
            <Button size="sm" variant="secondary" onPress={() => setCreating(true)}>
              Create the first group
            </Button>
          }
          title={`No groups in ${namespace} yet`}
        >
          A group gives the same roles to everyone in it: one place to change when a team&apos;s access changes.
        </EmptyState>
      ) : (
        <ul aria-label={`Groups in ${namespace}`} className="divide-y divide-separator">
          {groups.data.map((group) => (
            <GroupItem
              key={group.id}
              group={group}
              namespace={namespace}
              onDelete={() => {
                remove.reset();
                setPending({ kind: "delete", group });
              }}
              onEditRoles={() => setEditing(group)}
              onRemoveMember={(member) => {
                removeMember.reset();
                setPending({ kind: "remove", group, member });
              }}
            />
          ))}
        </ul>
      )}

      <CreateGroupDialog isOpen={creating} namespace={namespace} onOpenChange={setCreating} />
      <GroupRolesDialog group={editing} namespace={namespace} onClose={() => setEditing(null)} />

      <ConfirmDialog
        confirmLabel={pending?.kind === "remove" ? "Remove from group" : "Delete group"}
        error={confirmError?.message ?? null}
        isOpen={pending !== null}
        isPending={remove.isPending || removeMember.isPending}
        pendingLabel={pending?.kind === "remove" ? "Removing…" : "Deleting…"}
        title={pending?.kind === "remove" ? `Remove ${pending.member.email} from ${pending.group.name}?` : `Delete the group ${pending?.group.name ?? ""}?`}
        onConfirm={() => {
          if (pending?.kind === "delete") remove.mutate({ namespace, groupId: pending.group.id });
          if (pending?.kind === "remove") removeMember.mutate({ namespace, groupId: pending.group.id, userId: pending.member.userId });
        }}
        onOpenChange={(open) => (open ? undefined : setPending(null))}
      >
        {pending?.kind === "remove" ? (
          <p>They lose the roles this group grants at once; a role of their own in {namespace} stays.</p>
        ) : (
          <p>
            Its {pluralize(pending?.group.members.length ?? 0, "member")} lose the roles it grants in {namespace} at once. This cannot be
            undone.
          </p>
        )}
      </ConfirmDialog>
    </SectionCard>
  );
}

function GroupItem({
  group,
  namespace,
  onEditRoles,
  onDelete,
  onRemoveMember,
}: {
  group: Group;
  namespace: string;
  onEditRoles: () => void;
  onDelete: () => void;
  onRemoveMember: (member: GroupMember) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const add = useMutation(
    trpc.groups.addMember.mutationOptions({
      onSuccess: async () => {
        setEmail("");
        await queryClient.invalidateQueries(trpc.groups.list.pathFilter());
      },
    }),
  );
  const errors = useFormErrors(add.error, ABOUT_EMAIL);

  return (
    <li aria-label={group.name} className="flex flex-col gap-4 px-5 py-4">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <div className="min-w-0 flex-1">
          <h3 className="truncate text-sm font-semibold text-foreground">{group.name}</h3>
          {group.description ? <p className="text-sm text-muted">{group.description}</p> : null}
          <div className="mt-2 flex flex-wrap items-center gap-1.5">
            {group.roles.length === 0 ? (
              <span className="text-xs text-muted">Grants no role</span>
            ) : (
              group.roles.map((role) => (
                <Chip key={role} color={role === "admin" ? "accent" : "default"} size="sm" variant="soft">
                  {roleLabel(role)}
                </Chip>
              ))
            )}
          </div>
        </div>
        <div className="flex gap-2 self-end sm:self-auto">
          <Button aria-label={`Edit roles of ${group.name}`} size="sm" variant="secondary" onPress={onEditRoles}>
            Edit roles
          </Button>
          <Button aria-label={`Delete ${group.name}`} size="sm" variant="danger-soft" onPress={onDelete}>
            Delete
          </Button>
        </div>
      </div>

      <div className="flex flex-col gap-2">
        <p className="text-xs font-medium text-muted">{pluralize(group.members.length, "member")}</p>
        {group.members.length > 0 ? (
          <ul aria-label={`Members of ${group.name}`} className="flex flex-wrap gap-1.5">
            {group.members.map((member) => (
              <li key={member.userId} className="flex items-center gap-1 rounded-full bg-default py-0.5 pr-0.5 pl-3 text-sm text-foreground">
                <span className="max-w-[16rem] truncate">{member.displayName || member.email}</span>
                <CloseButton aria-label={`Remove ${member.email} from ${group.name}`} className="size-6" onPress={() => onRemoveMember(member)} />
              </li>
            ))}
          </ul>
        ) : null}
        <Form
          aria-label={`Add a member to ${group.name}`}
          className="flex flex-col gap-2 sm:flex-row sm:items-start"
          validationErrors={errors.fields}
          onSubmit={(event) => {
            event.preventDefault();
            add.mutate({ namespace, groupId: group.id, email: email.trim() });
          }}
        >
          <TextField aria-label={`Email to add to ${group.name}`} className="min-w-0 flex-1 sm:max-w-xs" isRequired name="email" type="email" value={email} onChange={setEmail}>
            <Input autoComplete="off" placeholder="Add by email" />
            <FieldError />
          </TextField>
          <Button isPending={add.isPending} size="md" type="submit" variant="secondary">
            Add
          </Button>
        </Form>
        {errors.form ? (
          <p className="text-sm text-danger" role="alert">
            {errors.form}
          </p>
        ) : null}
      </div>
    </li>
  );
}
