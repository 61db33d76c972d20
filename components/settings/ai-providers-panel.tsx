"use client";

import { Button, Checkbox, Description, FieldError, Form, Input, Label, ListBox, Select, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { Key } from "react";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useFormErrors } from "../form-errors";
import { LayersIcon, PlusIcon } from "../icons";
import { useTRPC } from "../trpc";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FormAlert } from "../ui/form-alert";
import { LoadError, SectionCard } from "./section-card";
import { FormActions } from "../ui/form-actions";
import { NamespaceSection } from "./namespace-section";
import { changedColumn, editDeleteColumn } from "./columns";

type Provider = inferRouterOutputs<AppRouter>["aiProviders"]["list"][number];
type Kind = Provider["kind"];

const KINDS: { id: Kind; label: string; detail: string; placeholder: string }[] = [
  { id: "openai", label: "OpenAI-compatible", detail: "OpenAI, or a local Ollama, vLLM or LM Studio by its base URL", placeholder: "https://api.openai.com/v1" },
  { id: "anthropic", label: "Anthropic", detail: "The Messages API", placeholder: "https://api.anthropic.com" },
];

/** Settings → AI providers of the namespace in the switcher: everyone with a role reads them, editors and admins change them. */
export function CurrentNamespaceAiProviders() {
  return <NamespaceSection writers={["editor", "admin"]}>{(namespace, canWrite) => <AiProvidersPanel canWrite={canWrite} namespace={namespace} />}</NamespaceSection>;
}

function AiProvidersPanel({ namespace, canWrite }: { namespace: string; canWrite: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const providers = useQuery(trpc.aiProviders.list.queryOptions({ namespace }));
  const [editing, setEditing] = useState<Provider | "new" | null>(null);
  const [deleting, setDeleting] = useState<Provider | null>(null);
  const remove = useMutation(
    trpc.aiProviders.delete.mutationOptions({
      onSuccess: async () => {
        setDeleting(null);
        await queryClient.invalidateQueries(trpc.aiProviders.pathFilter());
      },
    }),
  );

  const columns: DataTableColumn<Provider>[] = [
    { id: "name", header: "Name", isRowHeader: true, cell: (p) => <code className="font-mono text-sm">{p.name}</code> },
    { id: "kind", header: "Kind", cell: (p) => KINDS.find((k) => k.id === p.kind)?.label ?? p.kind },
    { id: "models", header: "Models", cell: (p) => <span className="font-mono text-sm">{p.models.join(", ")}</span> },
    { id: "baseUrl", header: "Base URL", hiddenBelow: "md", cell: (p) => <code className="block max-w-xs truncate font-mono text-sm">{p.baseUrl}</code> },
    { id: "key", header: "Key", hiddenBelow: "lg", cell: (p) => (p.apiKeySecret ? <code className="font-mono text-sm">{p.apiKeySecret}</code> : <span className="text-muted">none</span>) },
    changedColumn<Provider>(),
    editDeleteColumn<Provider>(canWrite, setEditing, setDeleting),
  ];

  return (
    <SectionCard
      actions={
        canWrite ? (
          <Button size="sm" onPress={() => setEditing("new")}>
            <PlusIcon className="size-4" />
            Add provider
          </Button>
        ) : undefined
      }
      description={
        <>
          Model providers of <span className="font-medium text-foreground">{namespace}</span>: an AI task names one as{" "}
          <code className="font-mono text-xs">llmProvider</code> and may use only the models listed. The key stays in a secret.
        </>
      }
      icon={<LayersIcon className="size-[18px]" />}
      id="ai-providers"
      title="AI providers"
    >
      {editing !== null ? <ProviderForm key={editing === "new" ? "" : editing.name} namespace={namespace} provider={editing === "new" ? null : editing} onDone={() => setEditing(null)} /> : null}
      {providers.isError && !providers.data ? (
        <LoadError message={providers.error.message} what="AI providers" onRetry={() => void providers.refetch()} />
      ) : (
        <DataTable
          columns={columns}
          empty={<EmptyState title="No AI providers yet">Add OpenAI, Anthropic or a local model server once; every workflow of the namespace can then call it.</EmptyState>}
          label="AI providers"
          loadingLabel="Loading AI providers"
          rowKey={(p) => p.name}
          rows={providers.data}
        />
      )}
      <ConfirmDialog
        confirmLabel="Delete provider"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete the AI provider ${deleting?.name ?? ""}?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        Tasks that name it fail from then on, saying so, until a provider of that name is added again. Its key secret is kept.
      </ConfirmDialog>
    </SectionCard>
  );
}

function ProviderForm({ namespace, provider, onDone }: { namespace: string; provider: Provider | null; onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const isNew = provider === null;
  const [name, setName] = useState(provider?.name ?? "");
  const [kind, setKind] = useState<Kind>(provider?.kind ?? "openai");
  const [baseUrl, setBaseUrl] = useState(provider?.baseUrl ?? "");
  const [apiKeySecret, setApiKeySecret] = useState(provider?.apiKeySecret ?? "");
  const [models, setModels] = useState(provider?.models.join("\n") ?? "");
  const [allowPrivateNetwork, setAllowPrivateNetwork] = useState(provider?.allowPrivateNetwork ?? false);
  const [description, setDescription] = useState(provider?.description ?? "");
  const save = useMutation(
    trpc.aiProviders.save.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries(trpc.aiProviders.pathFilter());
        onDone();
      },
    }),
  );
  const { fields, form } = useFormErrors(save.error);
  return (
    <Form
      aria-label={isNew ? "Add an AI provider" : `Edit ${provider.name}`}
      className="flex flex-col gap-4 border-b border-separator px-5 py-4"
      validationErrors={fields}
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate({
          namespace,
          name: name.trim(),
          kind,
            baseUrl: baseUrl.trim() || undefined,
            apiKeySecret: apiKeySecret.trim() || null,
            models: models
              .split(/[\n,]/)
              .map((m) => m.trim())
              .filter((m) => m !== ""),
          allowPrivateNetwork,
          description: description.trim() || null,
        });
      }}
    >
      <FormAlert message={form} title="The provider was not saved" />
      <div className="grid gap-4 sm:grid-cols-2">
        <TextField autoFocus={isNew} isDisabled={!isNew} isRequired name="name" value={name} onChange={setName}>
          <Label>Name</Label>
          <Input className="font-mono" placeholder="openai" />
          <Description>What tasks name as llmProvider.</Description>
          <FieldError />
        </TextField>
        <Select
          name="kind"
          value={kind}
          onChange={(key: Key | null) => {
            const next = KINDS.find((k) => k.id === key)?.id;
            if (next) setKind(next);
          }}
        >
          <Label>Kind</Label>
          <Select.Trigger>
            <Select.Value />
            <Select.Indicator />
          </Select.Trigger>
          <Select.Popover className="min-w-64">
            <ListBox>
              {KINDS.map((k) => (
                <ListBox.Item key={k.id} id={k.id} textValue={k.label}>
                  <div className="flex flex-col">
                    <Label>{k.label}</Label>
                    <Description>{k.detail}</Description>
                  </div>
                  <ListBox.ItemIndicator />
                </ListBox.Item>
              ))}
            </ListBox>
          </Select.Popover>
        </Select>
        <TextField name="baseUrl" value={baseUrl} onChange={setBaseUrl}>
          <Label>Base URL</Label>
          <Input className="font-mono" placeholder={KINDS.find((k) => k.id === kind)?.placeholder} />
          <Description>Empty: the kind&apos;s public API. Ollama: http://localhost:11434/v1.</Description>
          <FieldError />
        </TextField>
        <TextField name="apiKeySecret" value={apiKeySecret} onChange={setApiKeySecret}>
          <Label>Key secret</Label>
          <Input className="font-mono" placeholder="OPENAI_API_KEY" />
          <Description>The name of a secret under Settings → Secrets; empty for a server that needs no key.</Description>
          <FieldError />
        </TextField>
      </div>
      <TextField isRequired name="models" value={models} onChange={setModels}>
        <Label>Models</Label>
        <TextArea className="font-mono" placeholder={"gpt-4o-mini\ntext-embedding-3-small"} rows={3} />
        <Description>One per line: the only models tasks may name.</Description>
        <FieldError />
      </TextField>
      <TextField name="description" value={description} onChange={setDescription}>
        <Label>Description</Label>
        <Input placeholder="The team's OpenAI account" />
        <FieldError />
      </TextField>
      <Checkbox isSelected={allowPrivateNetwork} name="allowPrivateNetwork" onChange={setAllowPrivateNetwork}>
        <Checkbox.Content>
          <Checkbox.Control>
            <Checkbox.Indicator />
          </Checkbox.Control>
          Reachable on a private address
        </Checkbox.Content>
        <Description>For a model server on this machine or the local network; other tasks stay under the network policy.</Description>
      </Checkbox>
      <FormActions isPending={save.isPending} submitLabel={isNew ? "Add provider" : "Save provider"} onCancel={onDone} />
    </Form>
  );
}
