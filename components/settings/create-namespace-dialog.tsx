"use client";

import { Alert, Button, Description, FieldError, Form, Input, Label, Modal, TextArea, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useState } from "react";
import { routeMatching, useFormErrors } from "../form-errors";
import { useTRPC } from "../trpc";

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
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size="md">
        <Modal.Dialog aria-label="Create a namespace">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Create a namespace</Modal.Heading>
            <p className="text-sm text-muted">Workflows, runs, tasks and API keys live in one namespace and are invisible from the others.</p>
          </Modal.Header>
          <Form
            className="contents"
            validationErrors={fieldErrors}
            onSubmit={(event) => {
              event.preventDefault();
              if (!NAME_PATTERN.test(name.trim())) {
                setBadName(true);
                return;
              }
              create.mutate({ name: name.trim(), description: description.trim() || undefined });
            }}
          >
            <Modal.Body className="flex flex-col gap-5">
              {errors.form ? (
                <Alert role="alert" status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>The namespace was not created</Alert.Title>
                    <Alert.Description>{errors.form}</Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : null}
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
            </Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isPending={create.isPending} type="submit">
                {create.isPending ? "Creating…" : "Create namespace"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}
