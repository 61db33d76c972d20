"use client";

import { FieldError, Input, Label, TextArea, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import { routeMatching, useFormErrors } from "../form-errors";
import { useTRPC } from "../trpc";
import { FormAlert } from "../ui/form-alert";
import { FormDialog } from "../ui/form-dialog";
import { RoleCheckboxes } from "./role-checkboxes";

// "A group named … already exists" and "A group name is …" are about the name.
const ABOUT_NAME = routeMatching(/group name/i, "name");

/** A new group in one namespace: a name, what it is for, and the roles it grants there. */
export function CreateGroupDialog({ namespace, isOpen, onOpenChange }: { namespace: string; isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [roles, setRoles] = useState<NamespaceRole[]>(["viewer"]);
  const create = useMutation(
    trpc.groups.create.mutationOptions({
      onSuccess: async () => {
        onOpenChange(false);
        await queryClient.invalidateQueries(trpc.groups.list.pathFilter());
      },
    }),
  );
  const { reset } = create;

  useEffect(() => {
    if (!isOpen) return;
    setName("");
    setDescription("");
    setRoles(["viewer"]);
    reset();
  }, [isOpen, reset]);

  const errors = useFormErrors(create.error, ABOUT_NAME);

  return (
    <FormDialog
      description={
        <>
          In <span className="font-medium text-foreground">{namespace}</span>. Add people to it afterwards.
        </>
      }
      isOpen={isOpen}
      isPending={create.isPending}
      pendingLabel="Creating…"
      submitLabel="Create group"
      title="Create a group"
      validationErrors={errors.fields}
      onOpenChange={onOpenChange}
      onSubmit={() => create.mutate({ namespace, name: name.trim(), description: description.trim() || undefined, roles })}
    >
      <FormAlert message={errors.form} title="The group was not created" />
      <TextField autoFocus isRequired maxLength={100} name="name" value={name} onChange={setName}>
        <Label>Name</Label>
        <Input autoComplete="off" placeholder="on-call operators" />
        <FieldError />
      </TextField>
      <TextField maxLength={500} name="description" value={description} onChange={setDescription}>
        <Label>Description</Label>
        <TextArea placeholder="Who is in it and why" rows={2} />
        <FieldError />
      </TextField>
      <RoleCheckboxes value={roles} onChange={setRoles} />
    </FormDialog>
  );
}

/** Changes the roles a group grants; its members' access changes with it at once. */
export function GroupRolesDialog({
  namespace,
  group,
  onClose,
}: {
  namespace: string;
  group: { id: string; name: string; roles: NamespaceRole[] } | null;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [roles, setRoles] = useState<NamespaceRole[]>([]);
  const save = useMutation(
    trpc.groups.setRoles.mutationOptions({
      onSuccess: async () => {
        onClose();
        await queryClient.invalidateQueries(trpc.groups.list.pathFilter());
        await queryClient.invalidateQueries(trpc.namespaces.list.pathFilter());
      },
    }),
  );
  const { reset } = save;

  useEffect(() => {
    if (!group) return;
    setRoles(group.roles);
    reset();
  }, [group, reset]);

  const errors = useFormErrors(save.error);

  return (
    <FormDialog
      description="Takes effect for every member on their next request."
      isOpen={group !== null}
      isPending={save.isPending}
      label={`Roles of ${group?.name ?? "group"}`}
      pendingLabel="Saving…"
      size="sm"
      submitLabel="Save roles"
      title={<>Roles of {group?.name}</>}
      validationErrors={errors.fields}
      onOpenChange={(open) => (open ? undefined : onClose())}
      onSubmit={() => {
        if (group) save.mutate({ namespace, groupId: group.id, roles });
      }}
    >
      <FormAlert message={errors.form} title="The roles were not saved" />
      <RoleCheckboxes value={roles} onChange={setRoles} />
    </FormDialog>
  );
}
