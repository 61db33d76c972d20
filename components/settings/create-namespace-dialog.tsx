"use client";

import { Description, FieldError, Input, Label, TextArea, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { routeMatching, useFormErrors } from "../form-errors";
import { useTRPC } from "../trpc";
import { FormAlert } from "../ui/form-alert";
import { FormDialog } from "../ui/form-dialog";

/** Mirrors the Namespaces "name" CHECK, so a bad name is caught while typing; the server checks again. */
const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
// The service's refusals here (bad name, name taken) are about the name.
const ABOUT_NAME = routeMatching(/namespace/i, "name");
const NAME_RULE = "Lowercase letters, digits and hyphens, starting with a letter or digit.";

/** An owner creates a namespace; nobody else is in it until members or groups are added. */
export function CreateNamespaceDialog({
  isOpen,
  onOpenChange,
  onCreated,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onCreated: (name: string) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  // Checked on submit, not on blur, so no message appears (and moves the buttons) as the field loses focus.
  const [badName, setBadName] = useState(false);
  const create = useMutation(
    trpc.namespaces.create.mutationOptions({
      onSuccess: async (namespace) => {
        await queryClient.invalidateQueries(trpc.namespaces.list.pathFilter());
        onCreated(namespace.name);
        onOpenChange(false);
      },
    }),
  );
  const { reset } = create;

  useEffect(() => {
    if (!isOpen) return;
    setName("");
    setDescription("");
    setBadName(false);
    reset();
  }, [isOpen, reset]);

  const errors = useFormErrors(create.error, ABOUT_NAME);
  const fieldErrors = useMemo(() => (badName ? { ...errors.fields, name: [NAME_RULE] } : errors.fields), [errors, badName]);

  return (
    <FormDialog
      description="Workflows, runs, tasks and API keys live in one namespace and are invisible from the others."
      isOpen={isOpen}
      isPending={create.isPending}
      pendingLabel="Creating…"
      submitLabel="Create namespace"
      title="Create a namespace"
      validationErrors={fieldErrors}
      onOpenChange={onOpenChange}
      onSubmit={() => {
        if (!NAME_PATTERN.test(name.trim())) {
          setBadName(true);
          return;
        }
        create.mutate({ name: name.trim(), description: description.trim() || undefined });
      }}
    >
      <FormAlert message={errors.form} title="The namespace was not created" />
      <TextField
        autoFocus
        isRequired
        maxLength={63}
        name="name"
        value={name}
        onChange={(value) => {
          setName(value);
          setBadName(false);
        }}
      >
        <Label>Name</Label>
        <Input autoComplete="off" placeholder="billing" spellCheck={false} />
        <Description>Part of every REST path (/api/v1/ns/name/…), so it cannot change later.</Description>
        <FieldError />
      </TextField>
      <TextField maxLength={500} name="description" value={description} onChange={setDescription}>
        <Label>Description</Label>
        <TextArea placeholder="Invoices, payments and dunning" rows={2} />
        <FieldError />
      </TextField>
    </FormDialog>
  );
}
