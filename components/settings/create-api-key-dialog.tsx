"use client";

import { Alert, Button, Checkbox, CheckboxGroup, Description, FieldError, Form, Input, Label, ListBox, Modal, Select, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { Key } from "react";
import { useEffect, useState } from "react";
import { useTRPC } from "../trpc";
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
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size="md">
        <Modal.Dialog aria-label="Create an API key">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Create an API key</Modal.Heading>
            <p className="text-sm text-muted">
              For the <span className="font-medium text-foreground">{namespace}</span> namespace only. The key is shown once, right after it is created.
            </p>
          </Modal.Header>
          <Form
            className="contents"
            validationErrors={fieldErrors}
            onSubmit={(event) => {
              event.preventDefault();
              submit();
            }}
          >
            <Modal.Body className="mt-2 flex flex-col gap-5">
              {formError ? (
                <Alert status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>The key was not created</Alert.Title>
                    <Alert.Description>{formError}</Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : null}

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
            </Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isDisabled={scopes.length === 0 || name.trim() === ""} isPending={create.isPending} type="submit">
                {create.isPending ? "Creating…" : "Create key"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}
