"use client";

import { Alert, Button, Card, FieldError, Form, Input, Label, TextField } from "@heroui/react";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useFormErrors } from "../form-errors";
import { PasswordField } from "../password-field";
import { useTRPC } from "../trpc";

/**
 * Email and password. On success the session cookie is already set (by the
 * response), and the page the visitor was going to is loaded afresh so the
 * server renders it for the signed-in user.
 */
export function SignInForm({ next }: { next: string }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: () => window.location.assign(next),
    }),
  );
  // "Wrong email or password." is about both fields (and deliberately says
  // neither is right), so it is the form's message, not one field's.
  const errors = useFormErrors(signIn.error);

  return (
    <Card className="gap-0 p-0">
      <div className="px-6 pt-6 pb-2">
        <h1 className="text-xl font-semibold tracking-tight text-foreground">Sign in</h1>
        <p className="mt-1 text-sm text-muted">With the email and password your node-flow owner gave you.</p>
      </div>
      <Form
        className="flex flex-col gap-5 px-6 pt-4 pb-6"
        validationErrors={errors.fields}
        onSubmit={(event) => {
          event.preventDefault();
          signIn.mutate({ email: email.trim(), password });
        }}
      >
        {errors.form ? (
          <Alert role="alert" status="danger">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>{signIn.error?.data?.code === "TOO_MANY_REQUESTS" ? "Slow down" : "You were not signed in"}</Alert.Title>
              <Alert.Description>{errors.form}</Alert.Description>
            </Alert.Content>
          </Alert>
        ) : null}
        <TextField autoComplete="username" autoFocus isRequired name="email" type="email" value={email} onChange={setEmail}>
          <Label>Email</Label>
          <Input placeholder="you@example.com" />
          <FieldError />
        </TextField>
        <PasswordField autoComplete="current-password" label="Password" name="password" value={password} onChange={setPassword} />
        <Button className="mt-1" fullWidth isPending={signIn.isPending || signIn.isSuccess} type="submit">
          {signIn.isPending || signIn.isSuccess ? "Signing in…" : "Sign in"}
        </Button>
      </Form>
    </Card>
  );
}
