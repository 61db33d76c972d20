"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import { Button, Description, Label } from "@heroui/react";
import { ArrowDown, ArrowUp, Plus, X } from "lucide-react";
import type { Problem } from "@/engine";
import { OptionSelect } from "../../option-select";
import type { SelectOption } from "../../option-select";
import { CodeEditor } from "../code-editor";
import type { FieldSpec } from "./form-model";
import { nodeRelativePath } from "./form-model";

/**
 * A chat completion's `messages` as a list: each message a role and a
 * multi-line text with the inspector's `${…}` completion, added, removed and
 * moved up or down. It writes the shape the node stores — Conductor's
 * `[{role, message}]` — and keeps any other key a message has (an imported
 * `toolCalls`, say). A `messages` that is one expression (a string) is not a
 * list to edit: the inspector shows its JSON field instead.
 */

/** One message as stored: role and message, and whatever else it came with. */
export type LlmMessage = { role: string; message: string } & Record<string, unknown>;

export const MESSAGE_ROLES = ["system", "user", "assistant"] as const;

/** The messages of a stored value, or null when it is no list of messages (an expression, or something the JSON field should show as it is). */
export function messageList(value: unknown): LlmMessage[] | null {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return null;
  const out: LlmMessage[] = [];
  for (const m of value) {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return null;
    const { role, message } = m as Record<string, unknown>;
    if ((role !== undefined && typeof role !== "string") || (message !== undefined && typeof message !== "string")) return null;
    out.push({ ...(m as Record<string, unknown>), role: role ?? "user", message: message ?? "" });
  }
  return out;
}

/** The role a new message gets: a user's turn, unless the last message was the user's. */
export function nextRole(messages: readonly LlmMessage[]): string {
  return messages.at(-1)?.role === "user" ? "assistant" : "user";
}

export function addMessage(messages: readonly LlmMessage[]): LlmMessage[] {
  return [...messages, { role: nextRole(messages), message: "" }];
}

export function removeMessage(messages: readonly LlmMessage[], index: number): LlmMessage[] {
  return messages.filter((_, i) => i !== index);
}

/** Swaps message `index` with its neighbour `by` (−1 up, +1 down); out of range, the list is unchanged. */
export function moveMessage(messages: readonly LlmMessage[], index: number, by: -1 | 1): LlmMessage[] {
  const to = index + by;
  if (index < 0 || index >= messages.length || to < 0 || to >= messages.length) return [...messages];
  const next = [...messages];
  [next[index], next[to]] = [next[to]!, next[index]!];
  return next;
}

export function patchMessage(messages: readonly LlmMessage[], index: number, patch: Partial<Pick<LlmMessage, "role" | "message">>): LlmMessage[] {
  return messages.map((m, i) => (i === index ? { ...m, ...patch } : m));
}

function roleOptions(current: string): readonly SelectOption<string>[] {
  const roles: string[] = [...MESSAGE_ROLES];
  // Conductor's tool_call and tool roles (an agent's earlier turns) are kept, not offered.
  if (!roles.includes(current)) roles.push(current);
  return roles.map((r) => ({ id: r, label: r }));
}

export interface LlmMessagesFieldProps {
  spec: FieldSpec;
  messages: readonly LlmMessage[];
  /** The validator's problems for `llm.messages` and inside it. */
  problems: readonly Problem[];
  readOnly: boolean;
  onValue: (spec: FieldSpec, value: unknown) => void;
  completions?: CompletionSource;
}

export function LlmMessagesField({ spec, messages, problems, readOnly, onValue, completions }: LlmMessagesFieldProps) {
  const set = (next: LlmMessage[]) => onValue(spec, next);
  const indexOf = (p: Problem) => {
    const rel = nodeRelativePath(p.path);
    return rel !== null && typeof rel[2] === "number" ? rel[2] : undefined;
  };
  const listProblems = problems.filter((p) => indexOf(p) === undefined);
  return (
    <div aria-label={spec.label} className="flex min-w-0 flex-col gap-2" data-field={spec.id} role="group">
      <Label>
        {spec.title}
        {spec.required ? <span className="text-danger"> *</span> : null}
      </Label>
      {messages.length === 0 ? <p className="text-xs text-muted">No messages yet: a chat completion needs at least one user message.</p> : null}
      <ol className="flex flex-col gap-2">
        {messages.map((m, i) => {
          const own = problems.filter((p) => indexOf(p) === i);
          const label = `Message ${i + 1}`;
          return (
            // Index keys: moving a message pushes new values into the editors in place, which CodeEditor takes.
            <li key={i} aria-label={label} className="flex flex-col gap-1.5 rounded-xl border border-separator p-2" data-message-index={i} role="group">
              <div className="flex items-center gap-1">
                <OptionSelect
                  ariaLabel={`${label} role`}
                  className="min-w-0 flex-1"
                  isDisabled={readOnly}
                  options={roleOptions(m.role)}
                  value={m.role}
                  onChange={(role) => set(patchMessage(messages, i, { role }))}
                />
                {readOnly ? null : (
                  <>
                    <Button aria-label={`Move message ${i + 1} up`} isDisabled={i === 0} isIconOnly size="sm" variant="ghost" onPress={() => set(moveMessage(messages, i, -1))}>
                      <ArrowUp aria-hidden className="size-4" />
                    </Button>
                    <Button aria-label={`Move message ${i + 1} down`} isDisabled={i === messages.length - 1} isIconOnly size="sm" variant="ghost" onPress={() => set(moveMessage(messages, i, 1))}>
                      <ArrowDown aria-hidden className="size-4" />
                    </Button>
                    <Button aria-label={`Remove message ${i + 1}`} isIconOnly size="sm" variant="ghost" onPress={() => set(removeMessage(messages, i))}>
                      <X aria-hidden className="size-4" />
                    </Button>
                  </>
                )}
              </div>
              <div className={own.length > 0 ? "[&_.cm-editor]:border-danger" : undefined}>
                <CodeEditor
                  ariaLabel={`${label} text`}
                  completions={completions}
                  language="text"
                  maxHeight="16rem"
                  minHeight="3rem"
                  placeholder="Text, with ${workflow.input.…} or an upstream node's output"
                  readOnly={readOnly}
                  value={m.message}
                  onChange={(message) => set(patchMessage(messages, i, { message }))}
                />
              </div>
              {own.length > 0 ? <p className="text-xs text-danger">{own.map((p) => p.message).join(" ")}</p> : null}
            </li>
          );
        })}
      </ol>
      {readOnly ? null : (
        <Button className="self-start" size="sm" variant="secondary" onPress={() => set(addMessage(messages))}>
          <Plus aria-hidden className="size-4" />
          Add message
        </Button>
      )}
      {spec.description && listProblems.length === 0 ? <Description>{spec.description}</Description> : null}
      {listProblems.length > 0 ? <p className="text-xs text-danger">{listProblems.map((p) => p.message).join(" ")}</p> : null}
    </div>
  );
}

/** A prompt or instructions: a `${…}` text over several lines, with the same completion. */
export function LlmPromptField({ spec, value, problems, readOnly, onValue, completions }: { spec: FieldSpec; value: unknown; problems: readonly Problem[]; readOnly: boolean; onValue: (spec: FieldSpec, value: unknown) => void; completions?: CompletionSource }) {
  const text = typeof value === "string" ? value : "";
  return (
    <div className="flex min-w-0 flex-col gap-1" data-field={spec.id} data-invalid={problems.length > 0 || undefined}>
      <Label>
        {spec.title}
        {spec.required ? <span className="text-danger"> *</span> : null}
      </Label>
      <div className={problems.length > 0 ? "[&_.cm-editor]:border-danger" : undefined}>
        <CodeEditor ariaLabel={spec.label} completions={completions} language="text" maxHeight="16rem" minHeight="3rem" readOnly={readOnly} value={text} onChange={(next) => onValue(spec, next === "" ? undefined : next)} />
      </div>
      {spec.description && problems.length === 0 ? <Description>{spec.description}</Description> : null}
      {problems.length > 0 ? <p className="text-xs text-danger">{problems.map((p) => p.message).join(" ")}</p> : null}
    </div>
  );
}
