"use client";

import { Button, Checkbox, Description, FieldError, Input, Label, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { routeCredentialMessage, useFormErrors } from "../form-errors";
import { generatePassword } from "../generate-password";
import { PasswordField } from "../password-field";
import { useTRPC } from "../trpc";
import { FormAlert } from "../ui/form-alert";
import { FormDialog } from "../ui/form-dialog";

export interface CreatedUser {
  email: string;
  password: string;
}

/**
 * An owner adds a user with an initial password they hand over themselves
 * (node-flow sends no mail). The new user belongs to no namespace until
 * someone adds them to one.
 */
export function CreateUserDialog({
  isOpen,
  onOpenChange,
  minPasswordLength,
  onCreated,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  minPasswordLength: number;
  onCreated: (user: CreatedUser) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [visible, setVisible] = useState(false);
  const [isOwner, setIsOwner] = useState(false);
  const create = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: async (user, variables) => {
        onCreated({ email: user.email, password: variables.password });
        onOpenChange(false);
        await queryClient.invalidateQueries(trpc.users.list.pathFilter());
      },
    }),
  );
  const { reset } = create;

  useEffect(() => {
    if (!isOpen) return;
    setEmail("");
    setDisplayName("");
    setPassword("");
    setVisible(false);
    setIsOwner(false);
    reset();
  }, [isOpen, reset]);

  const errors = useFormErrors(create.error, routeCredentialMessage);

  return (
    <FormDialog
      description="They sign in with this email and password. Give them the password yourself."
      isOpen={isOpen}
      isPending={create.isPending}
      pendingLabel="Adding…"
      submitLabel="Add user"
      title="Add a user"
      validationErrors={errors.fields}
      onOpenChange={onOpenChange}
      onSubmit={() => create.mutate({ email: email.trim(), displayName: displayName.trim() || undefined, password, isOwner })}
    >
      <FormAlert message={errors.form} title="The user was not added" />
      <TextField autoFocus isRequired name="email" type="email" value={email} onChange={setEmail}>
        <Label>Email</Label>
        <Input autoComplete="off" placeholder="grace@example.com" />
        <FieldError />
      </TextField>
      <TextField maxLength={200} name="displayName" value={displayName} onChange={setDisplayName}>
        <Label>Display name</Label>
        <Input autoComplete="off" placeholder="Grace Hopper" />
        <FieldError />
      </TextField>
      <div className="flex flex-col gap-2">
        <PasswordField
          autoComplete="new-password"
          description={`At least ${minPasswordLength} characters.`}
          label="Initial password"
          minLength={minPasswordLength}
          name="password"
          value={password}
          visible={visible}
          onChange={setPassword}
          onVisibleChange={setVisible}
        />
        <Button
          className="self-start"
          size="sm"
          variant="secondary"
          onPress={() => {
            setPassword(generatePassword());
            setVisible(true);
          }}
        >
          Generate a password
        </Button>
      </div>
      <Checkbox isSelected={isOwner} name="isOwner" onChange={setIsOwner}>
        <Checkbox.Content>
          <Checkbox.Control>
            <Checkbox.Indicator />
          </Checkbox.Control>
          Also an owner
        </Checkbox.Content>
        <Description>Owners are admins in every namespace and manage users and namespaces.</Description>
      </Checkbox>
    </FormDialog>
  );
}
