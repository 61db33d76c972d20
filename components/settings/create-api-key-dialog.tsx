"use client";

import { Checkbox, CheckboxGroup, Description, FieldError, Input, Label, ListBox, Select, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { Key } from "react";
import { useEffect, useState } from "react";
import { useTRPC } from "../trpc";
import { FormAlert } from "../ui/form-alert";
import { FormDialog } from "../ui/form-dialog";
import { EXPIRY_PRESETS, SCOPE_OPTIONS, expiryFromPreset, normalizeScopes } from "./api-key-display";
import type { ExpiryPresetId, ScopeId } from "./api-key-display";
import type { IssuedKey } from "./issued-key-dialog";
import { useFormErrors } from "../form-errors";

const SELF = "self";

export interface ServiceAccountOption {
  id: string;
  name: string;
  disabled: boolean;
}

/**
 * The create form: name, scopes, whom the key acts for, and when it expires.
 * On success it closes and hands the minted key to the caller, which shows it
 * once in the IssuedKeyDialog.
 */
export function CreateApiKeyDialog({
  namespace,
  isOpen,
  onOpenChange,
  serviceAccounts,
  onCreated,
}: {
  namespace: string;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  serviceAccounts: ServiceAccountOption[];
  onCreated: (issued: IssuedKey) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<ScopeId[]>(["worker"]);
  const [owner, setOwner] = useState<string>(SELF);
  const [expiry, setExpiry] = useState<ExpiryPresetId>("never");

  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: async (created, variables) => {
        onCreated({ title: "API key created", name: variables.name.trim(), key: created.key });
        onOpenChange(false);
        await queryClient.invalidateQueries(trpc.apiKeys.pathFilter());
      },
    }),
  );
  const { reset } = create;

  // Each opening starts from a clean form; a key minted before is not prefilled anywhere.
  useEffect(() => {
    if (!isOpen) return;
    setName("");
    setScopes(["worker"]);
    setOwner(SELF);
    setExpiry("never");
    reset();
  }, [isOpen, reset]);

  // One object per error, not per render: a fresh one would re-show a corrected server error (form-errors.ts).
  const { fields: fieldErrors, form: formError } = useFormErrors(create.error);

  function submit() {
    create.mutate({
      namespace,
      name: name.trim(),
      scopes,
      expiresAt: expiryFromPreset(expiry, new Date()),
      serviceAccountId: owner === SELF ? null : owner,
    });
  }

  return (
    <FormDialog
      bodyClassName="mt-2"
      description={
        <>
          For the <span className="font-medium text-foreground">{namespace}</span> namespace only. The key is shown once, right after it is created.
        </>
      }
      isOpen={isOpen}
      isPending={create.isPending}
      isSubmitDisabled={scopes.length === 0 || name.trim() === ""}
      pendingLabel="Creating…"
      submitLabel="Create key"
      title="Create an API key"
      validationErrors={fieldErrors}
      onOpenChange={onOpenChange}
      onSubmit={submit}
    >
      <FormAlert message={formError} title="The key was not created" />

      <TextField autoFocus isRequired maxLength={100} name="name" value={name} onChange={setName}>
        <Label>Name</Label>
        <Input placeholder="billing workers" />
        <Description>What uses this key, so you know what breaks if you revoke it.</Description>
        <FieldError />
      </TextField>

      <CheckboxGroup isRequired name="scopes" value={scopes} onChange={(values) => setScopes(normalizeScopes(values))}>
        <Label>Scopes</Label>
        {SCOPE_OPTIONS.map((scope) => (
          <Checkbox key={scope.id} value={scope.id}>
            <Checkbox.Content>
              <Checkbox.Control>
                <Checkbox.Indicator />
              </Checkbox.Control>
              {scope.label}
            </Checkbox.Content>
            <Description>{scope.detail}</Description>
          </Checkbox>
        ))}
        <FieldError />
      </CheckboxGroup>

      <div className="grid gap-5 sm:grid-cols-2">
        <Select name="serviceAccountId" value={owner} onChange={(key: Key | null) => setOwner(key === null ? SELF : String(key))}>
          <Label>Acts for</Label>
          <Select.Trigger>
            <Select.Value />
            <Select.Indicator />
          </Select.Trigger>
          <Description>A service account&apos;s keys outlive the person who made them.</Description>
          <Select.Popover>
            <ListBox>
              <ListBox.Item id={SELF} textValue="You">
                You
                <ListBox.ItemIndicator />
              </ListBox.Item>
              {serviceAccounts.map((account) => (
                <ListBox.Item key={account.id} id={account.id} isDisabled={account.disabled} textValue={account.name}>
                  {account.name}
                  {account.disabled ? <span className="text-xs text-muted"> (disabled)</span> : null}
                  <ListBox.ItemIndicator />
                </ListBox.Item>
              ))}
            </ListBox>
          </Select.Popover>
          <FieldError />
        </Select>

        <Select name="expiresAt" value={expiry} onChange={(key: Key | null) => setExpiry((key ?? "never") as ExpiryPresetId)}>
          <Label>Expires</Label>
          <Select.Trigger>
            <Select.Value />
            <Select.Indicator />
          </Select.Trigger>
          <Description>An expired key is refused; rotate or create a new one.</Description>
          <Select.Popover>
            <ListBox>
              {EXPIRY_PRESETS.map((preset) => (
                <ListBox.Item key={preset.id} id={preset.id} textValue={preset.label}>
                  {preset.label}
                  <ListBox.ItemIndicator />
                </ListBox.Item>
              ))}
            </ListBox>
          </Select.Popover>
          <FieldError />
        </Select>
      </div>
    </FormDialog>
  );
}
