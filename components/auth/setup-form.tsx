"use client";

import { Alert, Button, Card, Description, FieldError, Form, Input, Label, TextField } from "@heroui/react";
import { useMutation } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { routeCredentialMessage, useFormErrors } from "../form-errors";
import { PasswordField } from "../password-field";
import { useTRPC } from "../trpc";

/**
 * Owner setup on a fresh install (like n8n's): the first account, which is
 * admin everywhere and adds everyone else. The server refuses it as soon as
 * any user exists, so this form can only ever succeed once.
 */
export function SetupForm({ minPasswordLength }: { minPasswordLength: number }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [confirmation, setConfirmation] = useState("");
  // Checked on submit, not on blur: an error appearing as the field loses focus
  // moves the button away from under the click that caused the blur.
  const [mismatch, setMismatch] = useState(false);
  const setup = useMutation(
    trpc.auth.setupOwner.mutationOptions({
      // Signed in by the same response: straight into the console.
      onSuccess: () => window.location.assign("/workflows"),
    }),
  );
  const errors = useFormErrors(setup.error, routeCredentialMessage);
  const fieldErrors = useMemo(() => (mismatch ? { ...errors.fields, confirmation: ["The two passwords differ."] } : errors.fields), [errors, mismatch]);
  const leaving = setup.isPending || setup.isSuccess;

  return (
    <Card className="gap-0 p-0">
      <div className="px-6 pt-6 pb-2">
        <h1 className="text-xl font-semibold tracking-tight text-foreground">Set up the owner account</h1>
        <p className="mt-1 text-sm leading-6 text-muted">
          This installation has no users yet. The owner is an admin in every namespace and adds everyone else.
        </p>
      </div>
      <Form
        className="flex flex-col gap-5 px-6 pt-4 pb-6"
        validationErrors={fieldErrors}
        onSubmit={(event) => {
          event.preventDefault();
          if (confirmation !== password) {
            setMismatch(true);
            return;
          }
          setup.mutate({ email: email.trim(), displayName: displayName.trim() || undefined, password });
        }}
      >
        {errors.form ? (
          <Alert role="alert" status="danger">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>The owner was not created</Alert.Title>
              <Alert.Description>{errors.form}</Alert.Description>
            </Alert.Content>
          </Alert>
        ) : null}
        <TextField autoComplete="email" autoFocus isRequired name="email" type="email" value={email} onChange={setEmail}>
          <Label>Email</Label>
          <Input placeholder="you@example.com" />
          <Description>You sign in with it.</Description>
          <FieldError />
        </TextField>
        <TextField autoComplete="name" maxLength={200} name="displayName" value={displayName} onChange={setDisplayName}>
          <Label>Display name</Label>
          <Input placeholder="Ada Lovelace" />
          <FieldError />
        </TextField>
        <PasswordField
          autoComplete="new-password"
          description={`At least ${minPasswordLength} characters. A few unrelated words make a strong one.`}
          label="Password"
          minLength={minPasswordLength}
          name="password"
          value={password}
          onChange={setPassword}
        />
        <TextField
          autoComplete="new-password"
          isRequired
          name="confirmation"
          type="password"
          value={confirmation}
          onChange={(value) => {
            setConfirmation(value);
            setMismatch(false);
          }}
        >
          <Label>Confirm password</Label>
          <Input spellCheck={false} />
          <FieldError />
        </TextField>
        <Button className="mt-1" fullWidth isPending={leaving} type="submit">
          {leaving ? "Creating the owner…" : "Create owner and sign in"}
        </Button>
      </Form>
    </Card>
  );
}
