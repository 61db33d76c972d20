"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import { Alert, Chip, Description, Disclosure, FieldError, Input, Label, TextField } from "@heroui/react";
import type { JSX } from "react";
import { useCallback, useLayoutEffect, useMemo, useRef, useState } from "react";
import { NODE_TYPES } from "@/engine";
import type { Problem, WorkflowDefinition, WorkflowNode } from "@/engine";
import { NodeIconTile } from "../nodes/node-icon";
import { AgentToolsEditor } from "./agent-tools-editor";
import { AiProviderPicker } from "./ai-provider-picker";
import { createUpstreamIndex, expressionCompletionSource, expressionOptions } from "./expression-completions";
import type { ExpressionOption } from "./expression-completions";
import { FieldInput, NO_PROBLEMS } from "./fields";
import { FormFields } from "./form-fields";
import { HUMAN_CUSTOM_FIELDS, HumanSections } from "./human-inspector";
import type { FieldSpec } from "./form-model";
import { assignProblems, fieldIds, getIn, nodeFormModel, nodeRelativePath, problemsUnder, setIn } from "./form-model";
import { LlmMessagesField, LlmPromptField, messageList } from "./llm-messages-field";

export interface NodeInspectorProps {
  /** The whole current definition (for autocomplete and context). */
  definition: WorkflowDefinition;
  /** The selected node. */
  node: WorkflowNode;
  /** The engine validator's problems for this node (problem.ref === node.ref). */
  problems: readonly Problem[];
  readOnly: boolean;
  /** A new node object for each edit; `field` is the edited field's path joined by ".". */
  onChange: (next: WorkflowNode, field: string) => void;
  /** Returns an error message, or null when renamed. */
  onRenameRef: (newRef: string) => string | null;
}

const ANY_EXPRESSION = "__expression";
/** Completion texts that read better over several lines than in one. */
const LLM_PROSE: ReadonlySet<string> = new Set(["LLM_CHAT_COMPLETE:llm.instructions", "LLM_TEXT_COMPLETE:llm.prompt"]);

/** Section headings, in the palette's style. */
export function SectionHeading({ children }: { children: string }) {
  return <h3 className="text-[11px] font-semibold tracking-wide text-muted uppercase">{children}</h3>;
}

/**
 * The selected node's form, generated from its type's schema (form-model.ts):
 * identity first, then the type's fields, then policies (closed) and
 * `optional`. Edits go out as whole new nodes; problems come in as props —
 * nothing here validates or walks the graph per keystroke. Completions read
 * the latest definition through a ref only when the popup asks, and the
 * upstream set behind them is cached while the graph's shape is unchanged.
 */
export function NodeInspector({ definition, node, problems, readOnly, onChange, onRenameRef }: NodeInspectorProps): JSX.Element {
  const info = NODE_TYPES[node.type];
  const model = nodeFormModel(node.type);
  const latest = useRef({ node, definition, onChange });
  useLayoutEffect(() => {
    latest.current = { node, definition, onChange };
  });

  const onValue = useCallback(
    (spec: FieldSpec, value: unknown) => {
      const { node: current, onChange: emit } = latest.current;
      emit(setIn(current, spec.path, value, model.optionalObjects), spec.id);
    },
    [model],
  );

  const [upstream] = useState(createUpstreamIndex);
  const optionsCache = useRef<{ definition: WorkflowDefinition; ref: string; options: readonly ExpressionOption[] } | null>(null);
  const completions = useMemo(() => {
    const options = () => {
      const { definition: def, node: current } = latest.current;
      const cached = optionsCache.current;
      if (cached && cached.definition === def && cached.ref === current.ref) return cached.options;
      const computed = expressionOptions(def, current.ref, upstream(def, current.ref));
      optionsCache.current = { definition: def, ref: current.ref, options: computed };
      return computed;
    };
    const sources = new Map<string, CompletionSource>();
    const visit = (fields: readonly FieldSpec[]) => {
      for (const f of fields) {
        if (f.completions) sources.set(f.id, expressionCompletionSource(options, f.kind === "expression" ? (f.options ?? []) : []));
        if (f.children) visit(f.children);
      }
    };
    visit([...model.common, ...model.specific, ...model.policy]);
    // For expressions typed outside the generated fields (the HUMAN builder's default values).
    sources.set(ANY_EXPRESSION, expressionCompletionSource(options, []));
    return sources;
  }, [model, upstream]);

  const ids = useMemo(() => fieldIds([...model.common, ...model.specific, ...model.policy, ...(model.optional ? [model.optional] : [])]), [model]);
  const assigned = useMemo(() => assignProblems(problems, ids, nodeRelativePath), [problems, ids]);
  const policyProblems = problemsUnder(assigned, "policy").length;
  const [policiesOpen, setPoliciesOpen] = useState(false);

  const evaluatorType = "evaluatorType" in node ? node.evaluatorType : undefined;
  const scriptLanguage = useCallback(
    (spec: FieldSpec): "javascript" | "jq" | "text" => (spec.language === "jq" ? "jq" : spec.language === "switch" && evaluatorType === "value-param" ? "text" : "javascript"),
    [evaluatorType],
  );

  const render = useCallback(
    (spec: FieldSpec) => {
      if (spec.id === "ref") return <RefField key={node.ref} current={node.ref} problems={assigned.byField.get("ref") ?? NO_PROBLEMS} readOnly={readOnly} spec={spec} onRename={onRenameRef} />;
      const problemsOf = () => assigned.byField.get(spec.id) ?? NO_PROBLEMS;
      if (node.type === "LLM_CHAT_COMPLETE" && spec.id === "llm.messages") {
        // One expression producing the list stays a JSON field.
        const messages = messageList(getIn(node, spec.path));
        if (messages !== null) return <LlmMessagesField completions={completions.get(spec.id)} messages={messages} problems={problemsOf()} readOnly={readOnly} spec={spec} onValue={onValue} />;
      }
      if (LLM_PROSE.has(`${node.type}:${spec.id}`)) {
        return <LlmPromptField completions={completions.get(spec.id)} problems={problemsOf()} readOnly={readOnly} spec={spec} value={getIn(node, spec.path)} onValue={onValue} />;
      }
      return undefined;
    },
    [node, assigned, readOnly, onRenameRef, completions, onValue],
  );

  const shared = { target: node, assigned, readOnly, onValue, completions, scriptLanguage, render };
  // HUMAN's form, assignee and escalation have editors of their own (human-inspector.tsx).
  // Their input (where the form's defaults also live) goes last, after the form.
  const [specific, humanInput] = useMemo(() => {
    // An AGENT's tools have their editor (agent-tools-editor.tsx); its problems still land on agent.tools.
    if (node.type === "AGENT") return [model.specific.map((f) => (f.id === "agent" && f.children ? { ...f, children: f.children.filter((c) => c.id !== "agent.tools") } : f)), []];
    if (node.type !== "HUMAN") return [model.specific, []];
    const own = model.specific.filter((f) => !HUMAN_CUSTOM_FIELDS.has(f.path[0] ?? ""));
    return [own.filter((f) => f.path[0] !== "input"), own.filter((f) => f.path[0] === "input")];
  }, [model, node.type]);

  return (
    <aside aria-label="Inspector" className="flex min-w-0 flex-col gap-5 p-4" data-node-ref={node.ref} data-panel="node" data-readonly={readOnly || undefined}>
      <header className="flex items-start gap-3">
        <NodeIconTile type={node.type} />
        <div className="min-w-0 flex-1">
          <h2 className="truncate text-base font-semibold tracking-tight text-foreground">{node.label ?? node.ref}</h2>
          <p className="text-xs text-muted">{info.description}</p>
        </div>
        <Chip aria-label={`Type ${node.type}`} className="shrink-0 font-mono" size="sm" variant="secondary">
          {node.type}
        </Chip>
      </header>

      {readOnly ? <ReadOnlyNote /> : null}
      {assigned.other.length > 0 ? <OtherProblems problems={assigned.other} /> : null}

      <section aria-label="General" className="flex flex-col gap-4">
        <FormFields {...shared} fields={model.common} />
      </section>

      {specific.length > 0 ? (
        <section aria-label={info.label} className="flex flex-col gap-4">
          <SectionHeading>{info.label}</SectionHeading>
          <AiProviderPicker node={node} readOnly={readOnly} onChange={onChange} />
          <FormFields {...shared} fields={specific} />
        </section>
      ) : null}

      {node.type === "AGENT" ? <AgentToolsEditor node={node} problems={assigned.byField.get("agent.tools") ?? NO_PROBLEMS} readOnly={readOnly} onChange={onChange} /> : null}

      {node.type === "HUMAN" ? (
        <>
          <HumanSections completions={completions.get(ANY_EXPRESSION)} node={node} readOnly={readOnly} onChange={onChange} />
          {humanInput.length > 0 ? (
            <section aria-label="Task input" className="flex flex-col gap-4">
              <FormFields {...shared} fields={humanInput} />
            </section>
          ) : null}
        </>
      ) : null}

      <Disclosure className="rounded-xl border border-separator" isExpanded={policiesOpen} onExpandedChange={setPoliciesOpen}>
        <Disclosure.Heading>
          <Disclosure.Trigger className="flex w-full items-center gap-2 px-3 py-2.5 text-left text-sm font-medium text-foreground">
            <span className="flex-1">Policies</span>
            {policyProblems > 0 ? (
              <Chip color="danger" size="sm" variant="soft">
                {policyProblems === 1 ? "1 problem" : `${policyProblems} problems`}
              </Chip>
            ) : null}
            <Disclosure.Indicator />
          </Disclosure.Trigger>
        </Disclosure.Heading>
        <Disclosure.Content>
          <Disclosure.Body className="flex flex-col gap-4 px-3 pb-3">
            {/* Mounted only while open: fifteen fields, two of them CodeMirror, for something rarely edited. */}
            {policiesOpen ? (
              <>
                <Description>Retries, timeouts, rate limits and caching. Empty fields use the task definition&apos;s value, then Conductor&apos;s default (shown greyed).</Description>
                <FormFields {...shared} fields={model.policy} />
              </>
            ) : null}
          </Disclosure.Body>
        </Disclosure.Content>
      </Disclosure>

      {model.optional ? (
        <FieldInput problems={assigned.byField.get(model.optional.id) ?? NO_PROBLEMS} readOnly={readOnly} spec={model.optional} value={node.optional} onValue={onValue} />
      ) : null}
    </aside>
  );
}

/** Says why nothing takes input: the values are still selectable and copyable. */
export function ReadOnlyNote() {
  return <p className="rounded-lg bg-default px-3 py-2 text-xs text-muted">Read-only: values can be selected and copied, not changed.</p>;
}

/** Problems of the node that belong to no field: its edges, unknown keys, the node as a whole. */
export function OtherProblems({ problems }: { problems: readonly Problem[] }) {
  // Only warnings (a node that never runs, …): it is saved and runs as Conductor would run it.
  const warnings = problems.every((p) => p.severity === "warning");
  const noun = warnings ? "warning" : "problem";
  return (
    <Alert status={warnings ? "warning" : "danger"}>
      <Alert.Indicator />
      <Alert.Content>
        <Alert.Title>{problems.length === 1 ? `1 ${noun}` : `${problems.length} ${noun}s`}</Alert.Title>
        <Alert.Description>
          <ul className="flex list-disc flex-col gap-0.5 pl-4">
            {problems.map((p, i) => (
              <li key={`${p.code}-${i}`}>{p.message}</li>
            ))}
          </ul>
        </Alert.Description>
      </Alert.Content>
    </Alert>
  );
}

/**
 * The ref is renamed through the store (which rewrites edges, parents and
 * expressions that name it), on Enter or when the field loses focus — never
 * per keystroke, since every intermediate text would be a rename.
 */
function RefField({ spec, current, problems, readOnly, onRename }: { spec: FieldSpec; current: string; problems: readonly Problem[]; readOnly: boolean; onRename: (to: string) => string | null }) {
  const [draft, setDraft] = useState(current);
  const [error, setError] = useState<string | null>(null);
  const commit = () => {
    const to = draft.trim();
    if (to === current) {
      setDraft(current);
      setError(null);
      return;
    }
    const refusal = onRename(to);
    setError(refusal);
  };
  const errors = [...problems.map((p) => p.message), ...(error ? [error] : [])];
  return (
    <TextField
      data-field="ref"
      isInvalid={errors.length > 0}
      isReadOnly={readOnly}
      isRequired
      name="ref"
      validationBehavior="aria"
      value={draft}
      onBlur={commit}
      onChange={(next) => {
        setDraft(next);
        setError(null);
      }}
      onKeyDown={(event) => {
        if (event.key === "Enter") commit();
        if (event.key === "Escape") {
          setDraft(current);
          setError(null);
        }
      }}
    >
      <Label>{spec.label}</Label>
      <Input className="font-mono" spellCheck={false} />
      {spec.description ? <Description>{spec.description}</Description> : null}
      <FieldError>{errors.join(" ")}</FieldError>
    </TextField>
  );
}
