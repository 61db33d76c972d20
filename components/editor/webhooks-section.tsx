"use client";

import { Alert, Button, Chip, Description, FieldError, Form, Input, Label, Skeleton, Switch, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { useFormErrors } from "../form-errors";
import { OptionSelect } from "../option-select";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { FormActions } from "../ui/form-actions";
import { FormAlert } from "../ui/form-alert";

type AuthMode = "token" | "hmac-sha256" | "hmac-sha256-timestamped";
type ResponseMode = "accepted" | "wait";

const AUTH_MODES = [
  { id: "token", label: "Token in a header" },
  { id: "hmac-sha256", label: "HMAC-SHA256 signature (GitHub)" },
  { id: "hmac-sha256-timestamped", label: "Timestamped HMAC-SHA256 (Stripe)" },
] as const satisfies readonly { id: AuthMode; label: string }[];

const RESPONSE_MODES = [
  { id: "accepted", label: "Answer 202 with the run id at once" },
  { id: "wait", label: "Wait for the run and answer with its output" },
] as const satisfies readonly { id: ResponseMode; label: string }[];

const SAMPLE_BODY = '{\n  "order": { "id": 42, "amount": 19.5 }\n}';

interface Draft {
  name: string;
  authMode: AuthMode;
  secretName: string;
  mapping: string;
  idempotencyKeyTemplate: string;
  responseMode: ResponseMode;
  waitSeconds: string;
  responseNodeRef: string;
  enabled: boolean;
}

const EMPTY_DRAFT: Draft = {
  name: "",
  authMode: "hmac-sha256",
  secretName: "",
  mapping: '{\n  "order": "${body.order}"\n}',
  idempotencyKeyTemplate: "",
  responseMode: "accepted",
  waitSeconds: "10",
  responseNodeRef: "",
  enabled: true,
};

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/**
 * A workflow's webhooks in its Triggers drawer: each with the address to
 * give a sender (copyable), how it authenticates and its latest calls, and a
 * form to add or change one with a live preview of what a sample call maps
 * to. The secret itself is never shown here, only its name.
 */
export function WebhooksSection({ namespace, workflowName, nodeRefs }: { namespace: string; workflowName: string; nodeRefs: readonly string[] }) {
  const trpc = useTRPC();
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ namespace, workflowName }));
  const [editing, setEditing] = useState<Draft | null>(null);

  return (
    <section aria-labelledby="webhooks-heading" className="flex flex-col gap-3">
      <div className="flex items-center gap-2">
        <h3 className="text-base font-semibold" id="webhooks-heading">
          Webhooks
        </h3>
        {editing === null ? (
          <Button className="ml-auto" size="sm" variant="secondary" onPress={() => setEditing(EMPTY_DRAFT)}>
            Add webhook
          </Button>
        ) : null}
      </div>
      <p className="text-sm text-muted">A sender calls the address with a signed request; each call starts a run of {workflowName}.</p>
      {editing !== null ? (
        <WebhookForm draft={editing} namespace={namespace} nodeRefs={nodeRefs} workflowName={workflowName} onDone={() => setEditing(null)} />
      ) : null}
      {webhooks.isError ? (
        <Alert status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>The webhooks could not be loaded</Alert.Title>
            <Alert.Description>{webhooks.error.message}</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : webhooks.isPending ? (
        <Skeleton className="h-16 rounded-lg" />
      ) : webhooks.data.length === 0 && editing === null ? (
        <p className="rounded-lg border border-dashed border-separator px-3 py-4 text-center text-sm text-muted">No webhooks yet.</p>
      ) : (
        <ul aria-label="Webhooks" className="flex flex-col gap-2">
          {webhooks.data.map((w) => (
            <WebhookItem
              key={w.name}
              namespace={namespace}
              webhook={w}
              onEdit={() =>
                setEditing({
                  name: w.name,
                  authMode: w.authMode,
                  secretName: w.secretName,
                  mapping: JSON.stringify(w.inputMapping, null, 2),
                  idempotencyKeyTemplate: w.idempotencyKeyTemplate ?? "",
                  responseMode: w.responseMode,
                  waitSeconds: String(w.waitSeconds),
                  responseNodeRef: w.responseNodeRef ?? "",
                  enabled: w.enabled,
                })
              }
            />
          ))}
        </ul>
      )}
    </section>
  );
}

interface WebhookView {
  name: string;
  path: string;
  authMode: AuthMode;
  authHeader: string;
  secretName: string;
  enabled: boolean;
  responseMode: ResponseMode;
}

function WebhookItem({ namespace, webhook, onEdit }: { namespace: string; webhook: WebhookView; onEdit: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [showCalls, setShowCalls] = useState(false);
  const [copied, setCopied] = useState(false);
  const url = typeof window === "undefined" ? webhook.path : `${window.location.origin}${webhook.path}`;
  const calls = useQuery({ ...trpc.webhooks.calls.queryOptions({ namespace, name: webhook.name, limit: 10 }), enabled: showCalls, refetchInterval: showCalls ? 3000 : false });
  const remove = useMutation(trpc.webhooks.delete.mutationOptions({ onSuccess: () => queryClient.invalidateQueries(trpc.webhooks.pathFilter()) }));
  const mode = AUTH_MODES.find((m) => m.id === webhook.authMode)?.label ?? webhook.authMode;

  return (
    <li className="rounded-lg border border-separator px-3 py-2" data-testid={`webhook-${webhook.name}`}>
      <div className="flex items-center gap-2">
        <span className="font-medium">{webhook.name}</span>
        <Chip color={webhook.enabled ? "success" : "default"} size="sm" variant="soft">
          {webhook.enabled ? "enabled" : "disabled"}
        </Chip>
        <div className="ml-auto flex gap-1">
          <Button size="sm" variant="ghost" onPress={onEdit}>
            Edit
          </Button>
          <Button isPending={remove.isPending} size="sm" variant="ghost" onPress={() => remove.mutate({ namespace, name: webhook.name })}>
            Delete
          </Button>
        </div>
      </div>
      <div className="mt-1 flex items-center gap-2">
        <code className="min-w-0 flex-1 truncate rounded bg-surface-secondary px-2 py-1 text-xs" title={url}>
          POST {url}
        </code>
        <Button
          aria-label={`Copy the address of ${webhook.name}`}
          size="sm"
          variant="tertiary"
          onPress={() => {
            void navigator.clipboard?.writeText(url).then(() => setCopied(true));
          }}
        >
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
      <p className="mt-1 text-xs text-muted">
        {mode} in <code>{webhook.authHeader}</code>, keyed by the secret <code>{webhook.secretName}</code> ·{" "}
        {webhook.responseMode === "wait" ? "answers with the run's output" : "answers 202 at once"}
      </p>
      {remove.error ? <p className="mt-1 text-xs text-danger">{remove.error.message}</p> : null}
      <button className="mt-1 text-xs font-medium text-accent hover:underline" type="button" onClick={() => setShowCalls((v) => !v)}>
        {showCalls ? "Hide latest calls" : "Latest calls"}
      </button>
      {showCalls ? (
        calls.isPending ? (
          <Skeleton className="mt-1 h-8 rounded" />
        ) : calls.isError ? (
          <p className="text-xs text-danger">{calls.error.message}</p>
        ) : calls.data.length === 0 ? (
          <p className="mt-1 text-xs text-muted">No calls yet.</p>
        ) : (
          <ol aria-label={`Latest calls to ${webhook.name}`} className="mt-1 flex flex-col gap-1 text-xs">
            {calls.data.map((c) => (
              <li key={c.id} className="flex items-center gap-2">
                <Chip color={c.status < 300 ? "success" : "danger"} size="sm" variant="soft">
                  {c.status}
                </Chip>
                <RelativeTime className="text-muted" iso={c.receivedAt} />
                {c.workflowId !== null ? (
                  <Link className="truncate font-mono text-accent hover:underline" href={`/executions/${c.workflowId}`}>
                    {c.workflowId.slice(0, 8)}…
                  </Link>
                ) : null}
                {c.refusal !== null ? <span className="truncate text-muted">{c.refusal}</span> : null}
              </li>
            ))}
          </ol>
        )
      ) : null}
    </li>
  );
}

function WebhookForm({ namespace, workflowName, nodeRefs, draft, onDone }: { namespace: string; workflowName: string; nodeRefs: readonly string[]; draft: Draft; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<Draft>(draft);
  const [sampleBody, setSampleBody] = useState(SAMPLE_BODY);
  const isNew = draft.name === "";
  useEffect(() => setForm(draft), [draft]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setForm((f) => ({ ...f, [key]: value }));

  const mapping = useMemo(() => parseJson(form.mapping), [form.mapping]);
  const sample = useMemo(() => parseJson(sampleBody), [sampleBody]);
  const preview = useQuery({
    ...trpc.webhooks.preview.queryOptions({
      namespace,
      inputMapping: mapping.ok ? mapping.value : null,
      idempotencyKeyTemplate: form.idempotencyKeyTemplate.trim() === "" ? null : form.idempotencyKeyTemplate,
      call: { body: sample.ok ? sample.value : sampleBody, headers: {}, query: {} },
    }),
    enabled: mapping.ok,
  });

  const save = useMutation(
    trpc.webhooks.save.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.webhooks.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form: formError } = useFormErrors(save.error);
  const validationErrors = mapping.ok ? fields : { ...fields, inputMapping: [`Not JSON: ${mapping.message}`] };

  function submit() {
    if (!mapping.ok) return;
    save.mutate({
      namespace,
      name: form.name.trim(),
      config: {
        workflowName,
        authMode: form.authMode,
        secretName: form.secretName.trim(),
        inputMapping: mapping.value,
        idempotencyKeyTemplate: form.idempotencyKeyTemplate.trim() === "" ? null : form.idempotencyKeyTemplate.trim(),
        responseMode: form.responseMode,
        waitSeconds: Number(form.waitSeconds) || 10,
        responseNodeRef: form.responseMode === "wait" && form.responseNodeRef !== "" ? form.responseNodeRef : null,
        enabled: form.enabled,
      },
    });
  }

  return (
    <Form
      aria-label={isNew ? "New webhook" : `Edit webhook ${draft.name}`}
      className="flex flex-col gap-4 rounded-lg border border-accent/40 p-3"
      validationErrors={validationErrors}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <FormAlert message={formError} title="The webhook was not saved" />
      <TextField isDisabled={!isNew} isRequired name="name" value={form.name} onChange={(v) => set("name", v)}>
        <Label>Name</Label>
        <Input placeholder="github-push" />
        <Description>The last part of its address: lower-case letters, digits, - and _.</Description>
        <FieldError />
      </TextField>
      <OptionSelect label="Authentication" options={AUTH_MODES} value={form.authMode} onChange={(v) => set("authMode", v)} />
      <TextField isRequired name="secretName" value={form.secretName} onChange={(v) => set("secretName", v)}>
        <Label>Secret</Label>
        <Input className="font-mono" placeholder="GITHUB_WEBHOOK_SECRET" />
        <Description>The name of a namespace secret (Settings → Secrets) that holds the token or signing key.</Description>
        <FieldError />
      </TextField>
      <TextField name="inputMapping" value={form.mapping} onChange={(v) => set("mapping", v)}>
        <Label>Run input</Label>
        <TextArea className="font-mono text-xs" rows={5} spellCheck={false} />
        <Description>{"A template over the call: ${body.…}, ${headers['x-…']} (lower case), ${query.…}."}</Description>
        <FieldError />
      </TextField>
      <TextField name="idempotencyKeyTemplate" value={form.idempotencyKeyTemplate} onChange={(v) => set("idempotencyKeyTemplate", v)}>
        <Label>Idempotency key</Label>
        <Input className="font-mono" placeholder="${headers['x-github-delivery']}" />
        <Description>A sender&apos;s retry with the same key starts no second run. Empty: every call starts one.</Description>
        <FieldError />
      </TextField>
      <OptionSelect label="Answer" options={RESPONSE_MODES} value={form.responseMode} onChange={(v) => set("responseMode", v)} />
      {form.responseMode === "wait" ? (
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField name="waitSeconds" value={form.waitSeconds} onChange={(v) => set("waitSeconds", v)}>
            <Label>Wait up to (s)</Label>
            <Input inputMode="numeric" />
            <FieldError />
          </TextField>
          <OptionSelect
            label="Answer with"
            options={[{ id: "", label: "The run's output" }, ...nodeRefs.map((ref) => ({ id: ref, label: `The output of ${ref}` }))]}
            value={form.responseNodeRef}
            onChange={(v) => set("responseNodeRef", v)}
          />
        </div>
      ) : null}
      <Switch isSelected={form.enabled} onChange={(v) => set("enabled", v)}>
        <Switch.Content>
          <Switch.Control>
            <Switch.Thumb />
          </Switch.Control>
          Enabled
        </Switch.Content>
      </Switch>
      <div className="flex flex-col gap-2 rounded-lg bg-surface-secondary p-2">
        <TextField value={sampleBody} onChange={setSampleBody}>
          <Label>Sample body</Label>
          <TextArea className="font-mono text-xs" rows={4} spellCheck={false} />
        </TextField>
        <div aria-live="polite" className="text-xs">
          <span className="font-medium">Starts a run with</span>
          <pre className="mt-1 max-h-40 overflow-auto rounded bg-surface p-2 font-mono" data-testid="webhook-preview">
            {preview.data ? JSON.stringify(preview.data.input, null, 2) : mapping.ok ? "…" : "(fix the mapping's JSON)"}
          </pre>
          {preview.data?.idempotencyKey ? <p className="mt-1">Idempotency key: {preview.data.idempotencyKey}</p> : null}
          {preview.data?.problems.map((p) => (
            <p key={p} className="mt-1 text-danger">
              {p}
            </p>
          ))}
        </div>
      </div>
      <FormActions isPending={save.isPending} submitLabel={isNew ? "Create webhook" : "Save webhook"} onCancel={onDone} />
    </Form>
  );
}
