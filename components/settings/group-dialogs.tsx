"use client";

import { Alert, Button, FieldError, Form, Input, Label, Modal, TextArea, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import { routeMatching, useFormErrors } from "../form-errors";
import { useTRPC } from "../trpc";
import { RoleCheckboxes } from "./role-checkboxes";

// "A group named … already exists" and "A group name is …" are about the name.
const ABOUT_NAME = routeMatching(/group name/i, "name");

function FormAlert({ title, message }: { title: string; message: string | null }) {
  if (!message) return null;
  return (
    <Alert role="alert" status="danger">
      <Alert.Indicator />
      <Alert.Content>
        <Alert.Title>{title}</Alert.Title>
        <Alert.Description>{message}</Alert.Description>
      </Alert.Content>
    </Alert>
  );
}

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
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size="md">
        <Modal.Dialog aria-label="Create a group">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Create a group</Modal.Heading>
            <p className="text-sm text-muted">
              In <span className="font-medium text-foreground">{namespace}</span>. Add people to it afterwards.
            </p>
          </Modal.Header>
          <Form
            className="contents"
            validationErrors={errors.fields}
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate({ namespace, name: name.trim(), description: description.trim() || undefined, roles });
            }}
          >
            <Modal.Body className="flex flex-col gap-5">
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
            </Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isPending={create.isPending} type="submit">
                {create.isPending ? "Creating…" : "Create group"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
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
    <Modal.Backdrop isOpen={group !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <Modal.Container placement="center" scroll="inside" size="sm">
        <Modal.Dialog aria-label={`Roles of ${group?.name ?? "group"}`}>
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Roles of {group?.name}</Modal.Heading>
            <p className="text-sm text-muted">Takes effect for every member on their next request.</p>
          </Modal.Header>
          <Form
            className="contents"
            validationErrors={errors.fields}
            onSubmit={(event) => {
              event.preventDefault();
              if (group) save.mutate({ namespace, groupId: group.id, roles });
            }}
          >
            <Modal.Body className="flex flex-col gap-5">
              <FormAlert message={errors.form} title="The roles were not saved" />
              <RoleCheckboxes value={roles} onChange={setRoles} />
            </Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isPending={save.isPending} type="submit">
                {save.isPending ? "Saving…" : "Save roles"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}
