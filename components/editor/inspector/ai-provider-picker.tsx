"use client";

import { Description, Label, ListBox, Select } from "@heroui/react";
import { useQuery } from "@tanstack/react-query";
import type { Key } from "react";
import { isLlmNodeType } from "@/engine";
import type { WorkflowNode } from "@/engine";
import { useNamespace } from "../../console-session";
import { useTRPC } from "../../trpc";

/**
 * For an LLM, retrieval or agent node: the namespace's configured AI providers
 * (Settings → AI providers) and the models each allows, as two pickers that
 * write the node's llmProvider/model — or, for indexing and search,
 * embeddingModelProvider/embeddingModel. The text fields below stay, for an
 * expression or a provider not configured yet.
 */
export function AiProviderPicker({ node, readOnly, onChange }: { node: WorkflowNode; readOnly: boolean; onChange: (next: WorkflowNode, field: string) => void }) {
  const namespace = useNamespace();
  const trpc = useTRPC();
  const enabled = namespace !== null && (isLlmNodeType(node.type) || node.type === "AGENT");
  const providers = useQuery({ ...trpc.aiProviders.list.queryOptions({ namespace: namespace ?? "" }), enabled });
  // An agent keeps the same two fields in `agent`.
  const group = node.type === "AGENT" ? "agent" : "llm";
  if (!enabled || !(group in node)) return null;
  const embedding = node.type === "LLM_INDEX_TEXT" || node.type === "LLM_SEARCH_INDEX";
  const providerKey = embedding ? "embeddingModelProvider" : "llmProvider";
  const modelKey = embedding ? "embeddingModel" : "model";
  const llm = (node as unknown as Record<string, Record<string, unknown>>)[group]!;
  const list = providers.data ?? [];
  if (providers.isPending) return null;
  if (list.length === 0) {
    return <Description>No AI providers in this namespace yet: add one under Settings → AI providers.</Description>;
  }
  const chosen = list.find((p) => p.name === llm[providerKey]);
  const set = (patch: Record<string, unknown>, field: string) => onChange({ ...node, [group]: { ...llm, ...patch } }, `${group}.${field}`);
  return (
    <div aria-label="Configured provider" className="grid grid-cols-2 gap-3" role="group">
      <Select
        aria-label="Configured provider"
        isDisabled={readOnly}
        placeholder="Pick a provider"
        value={chosen?.name ?? null}
        onChange={(key: Key | null) => {
          const next = list.find((p) => p.name === key);
          if (next === undefined) return;
          const model = typeof llm[modelKey] === "string" && next.models.includes(llm[modelKey]) ? llm[modelKey] : next.models[0];
          set({ [providerKey]: next.name, [modelKey]: model }, providerKey);
        }}
      >
        <Label>Provider</Label>
        <Select.Trigger>
          <Select.Value />
          <Select.Indicator />
        </Select.Trigger>
        <Select.Popover className="min-w-48">
          <ListBox>
            {list.map((p) => (
              <ListBox.Item key={p.name} id={p.name} textValue={p.name}>
                <div className="flex flex-col">
                  <Label>{p.name}</Label>
                  <Description>{p.kind === "anthropic" ? "Anthropic" : "OpenAI-compatible"}</Description>
                </div>
                <ListBox.ItemIndicator />
              </ListBox.Item>
            ))}
          </ListBox>
        </Select.Popover>
      </Select>
      <Select
        aria-label="Configured model"
        isDisabled={readOnly || chosen === undefined}
        placeholder="Pick a model"
        value={chosen !== undefined && typeof llm[modelKey] === "string" && chosen.models.includes(llm[modelKey]) ? llm[modelKey] : null}
        onChange={(key: Key | null) => {
          if (typeof key === "string" && chosen?.models.includes(key)) set({ [modelKey]: key }, modelKey);
        }}
      >
        <Label>Model</Label>
        <Select.Trigger>
          <Select.Value />
          <Select.Indicator />
        </Select.Trigger>
        <Select.Popover className="min-w-48">
          <ListBox>
            {(chosen?.models ?? []).map((m) => (
              <ListBox.Item key={m} id={m} textValue={m}>
                <span className="font-mono text-sm">{m}</span>
                <ListBox.ItemIndicator />
              </ListBox.Item>
            ))}
          </ListBox>
        </Select.Popover>
      </Select>
    </div>
  );
}
