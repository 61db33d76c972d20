"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import { Alert, Button, Chip, Description, Disclosure, Input, Label, NumberField, Switch, TextArea, TextField } from "@heroui/react";
import { ArrowDown, ArrowUp, Plus, Trash2 } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { containsExpression } from "@/engine";
import type { WorkflowNode } from "@/engine";
import { HumanTaskForm } from "../../forms/human-task-form";
import { OptionSelect } from "../../option-select";
import type { SelectOption } from "../../option-select";
import { CodeEditor } from "../code-editor";
import { AssigneePicker } from "../../forms/assignee-picker";
import type { HumanField, HumanFieldType } from "./human-form-model";
import {
  HUMAN_FIELD_TYPES,
  HUMAN_FIELD_TYPE_LABELS,
  changeFieldType,
  defaultFromText,
  defaultToText,
  fieldProblems,
  fieldsToForm,
  formToFields,
  freshKey,
  keyAfterLabel,
  keyFromLabel,
  move,
  moveInputKey,
} from "./human-form-model";
import { FormTemplateControls, TemplateFormPreview } from "./human-templates";

/** The HUMAN fields this file draws; the generated form draws the rest (title, outcomes, approvals, due in, input). */
export const HUMAN_CUSTOM_FIELDS: ReadonlySet<string> = new Set(["form", "assignee", "escalation"]);

type HumanNode = Extract<WorkflowNode, { type: "HUMAN" }>;
type Json = Record<string, unknown>;
type EscalationStep = { action: "reassign"; assignee: string; dueIn?: string } | { action: "timeout" } | { action: "complete"; outcome: string; data?: Json };

export interface HumanSectionProps {
  node: WorkflowNode;
  readOnly: boolean;
  /** `field` is the coalescing key: typing into one input is one undo step. */
  onChange: (next: WorkflowNode, field: string) => void;
  /** `${…}` completion for the default-value expressions. */
  completions?: CompletionSource;
  namespace?: string;
}

let actionIds = 0;
/** A key no other edit shares: adding, removing and moving are each their own undo step. */
function step(name: string): string {
  return `${name}#${++actionIds}`;
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function formOf(node: WorkflowNode): Json {
  const form = (node as { form?: unknown }).form;
  return isRecord(form) ? form : {};
}

function withField<T extends WorkflowNode>(node: T, key: string, value: unknown): T {
  const next = { ...node } as Json;
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next as T;
}

/** The pre-fill the preview shows: literal defaults as they are; an expression is only known when the task opens. */
function previewData(fields: readonly HumanField[], input: Json | undefined): Json {
  const out: Json = {};
  for (const f of fields) {
    const v = input?.[f.key];
    if (v === undefined || (typeof v === "string" && containsExpression(v))) continue;
    out[f.key] = v;
  }
  return out;
}

/** The preview's UI schema: a field filled by an expression shows the expression as its placeholder. */
function previewUiSchema(uiSchema: Json, input: Json | undefined): Json {
  const out: Json = { ...uiSchema };
  for (const [key, v] of Object.entries(input ?? {})) {
    if (typeof v !== "string" || !containsExpression(v)) continue;
    const own = isRecord(out[key]) ? out[key] : {};
    out[key] = { ...own, "ui:placeholder": v };
  }
  return out;
}

/** The sections of the HUMAN inspector: assignment, the form (builder, templates, preview) and escalation. */
export function HumanSections({ node, readOnly, onChange, completions, namespace }: HumanSectionProps) {
  const human = node as HumanNode;
  const outcomes = Array.isArray(human.outcomes) ? human.outcomes.filter((o): o is string => typeof o === "string") : [];
  return (
    <>
      <section aria-label="Assignment" className="flex flex-col gap-3">
        <AssigneePicker
          label="Assignee"
          readOnly={readOnly}
          value={typeof human.assignee === "string" ? human.assignee : undefined}
          onChange={(text, coalesce) => onChange(withField(node, "assignee", text), coalesce ? "assignee" : step("assignee"))}
        />
      </section>
      <FormSection completions={completions} namespace={namespace} node={node} readOnly={readOnly} onChange={onChange} />
      <EscalationEditor node={node} outcomes={outcomes} readOnly={readOnly} onChange={onChange} />
    </>
  );
}

/** A text committed on blur or Enter, not per keystroke (keys: every intermediate key would move the field's default). */
function DraftText({ label, value, readOnly, invalid, onCommit, multiline = false, placeholder, description, mono = false }: { label: string; value: string; readOnly: boolean; invalid?: boolean; onCommit: (v: string) => void; multiline?: boolean; placeholder?: string; description?: string; mono?: boolean }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const commit = () => {
    if (draft !== value) onCommit(draft);
  };
  return (
    <TextField
      isInvalid={invalid}
      isReadOnly={readOnly}
      validationBehavior="aria"
      value={draft}
      onBlur={commit}
      onChange={setDraft}
      onKeyDown={(e) => {
        if (e.key === "Enter" && !multiline) commit();
        if (e.key === "Escape") setDraft(value);
      }}
    >
      <Label>{label}</Label>
      {multiline ? <TextArea placeholder={placeholder} rows={3} /> : <Input className={mono ? "font-mono" : undefined} placeholder={placeholder} spellCheck={false} />}
      {description ? <Description>{description}</Description> : null}
    </TextField>
  );
}

function OptionalNumber({ label, value, readOnly, onChange, integer = false }: { label: string; value: number | undefined; readOnly: boolean; onChange: (v: number | undefined) => void; integer?: boolean }) {
  return (
    <NumberField
      className="min-w-0 flex-1"
      formatOptions={integer ? { useGrouping: false, maximumFractionDigits: 0 } : { useGrouping: false }}
      isReadOnly={readOnly}
      value={value ?? Number.NaN}
      onChange={(next) => onChange(Number.isNaN(next) ? undefined : next)}
    >
      <Label>{label}</Label>
      <NumberField.Group>
        <NumberField.Input />
      </NumberField.Group>
    </NumberField>
  );
}

function FlagSwitch({ label, selected, readOnly, onChange, description }: { label: string; selected: boolean; readOnly: boolean; onChange: (v: boolean) => void; description?: string }) {
  return (
    <Switch isDisabled={readOnly} isSelected={selected} onChange={onChange}>
      <Switch.Content>
        <Switch.Control>
          <Switch.Thumb />
        </Switch.Control>
        {label}
      </Switch.Content>
      {description ? <Description>{description}</Description> : null}
    </Switch>
  );
}

function FormSection({ node, readOnly, onChange, completions, namespace }: HumanSectionProps) {
  const form = formOf(node);
  const input = isRecord(node.input) ? node.input : undefined;
  const template = isRecord(form.template) ? (form.template as { name: string; version?: number }) : undefined;
  const fields = useMemo(() => formToFields(form.schema, form.uiSchema), [form.schema, form.uiSchema]);
  const problems = useMemo(() => fieldProblems(fields ?? []), [fields]);
  const [open, setOpen] = useState<number | null>(null);
  const outcomes = Array.isArray((node as HumanNode).outcomes) ? ((node as HumanNode).outcomes ?? []) : [];

  /** `nextInput`: the node's new input (undefined: none), or null to leave it. */
  const setForm = (nextForm: Json | undefined, key: string, nextInput: { input: Json | undefined } | null = null) => {
    let next = withField(node, "form", nextForm && Object.keys(nextForm).length > 0 ? nextForm : undefined);
    if (nextInput !== null) next = withField(next, "input", nextInput.input);
    onChange(next, key);
  };
  const setFields = (list: HumanField[], key: string, nextInput: { input: Json | undefined } | null = null) => {
    const { schema, uiSchema } = fieldsToForm(list);
    const rest: Json = { ...form };
    delete rest.template;
    setForm(list.length === 0 ? undefined : { ...rest, schema, uiSchema: Object.keys(uiSchema).length > 0 ? uiSchema : undefined }, key, nextInput);
  };
  const update = (i: number, patch: Partial<HumanField>, key: string) => {
    if (!fields) return;
    setFields(
      fields.map((f, j) => (j === i ? { ...f, ...patch } : f)),
      key,
    );
  };

  return (
    <section aria-label="Form" className="flex flex-col gap-3">
      <div className="flex items-center justify-between gap-2">
        <h3 className="text-[11px] font-semibold tracking-wide text-muted uppercase">Form</h3>
        <FormTemplateControls
          fields={fields}
          form={form}
          namespace={namespace}
          readOnly={readOnly}
          onUse={(ref) => setForm({ template: ref }, step("form.template"))}
          onDetach={(schema, uiSchema) => setForm({ schema, ...(Object.keys(uiSchema).length > 0 ? { uiSchema } : {}) }, step("form.detach"))}
        />
      </div>

      {template ? (
        <p className="rounded-lg bg-default px-3 py-2 text-xs text-muted" data-testid="form-template">
          Uses the template <code className="font-mono text-foreground">{template.name}</code>
          {template.version ? ` version ${template.version}` : ", its latest version when the task opens"}. Detach it to edit the fields here.
        </p>
      ) : fields === null ? (
        <Alert status="warning">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>Written by hand</Alert.Title>
            <Alert.Description>This form&apos;s JSON Schema uses more than the builder shows (nested objects, oneOf, …). Edit it in the JSON view; the preview below still renders it.</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : (
        <>
          {fields.length === 0 ? <p className="text-xs text-muted">No fields yet: the task is a plain choice between its outcomes.</p> : null}
          <ol aria-label="Form fields" className="flex flex-col gap-2">
            {fields.map((field, i) => (
              <li key={i}>
                <div aria-label={`Field ${i + 1}`} role="group">
                  <FieldCard
                    completions={completions}
                    count={fields.length}
                    defaultValue={input?.[field.key]}
                    field={field}
                    index={i}
                    open={open === i}
                    problems={problems.get(i) ?? []}
                    readOnly={readOnly}
                    ref_={node.ref}
                    onDefault={(text) => {
                      const v = defaultFromText(field, text);
                      onChange(withField(node, "input", v === undefined ? moveInputKey(input, field.key, undefined) : { ...input, [field.key]: v }), `input.${field.key}`);
                    }}
                    onLabel={(label) => {
                      // A generated key follows the label as it is typed (one undo step with it).
                      const key = keyAfterLabel(fields, i, label);
                      setFields(
                        fields.map((f, j) => (j === i ? { ...f, label, key } : f)),
                        `form.${i}.label`,
                        key === field.key ? null : { input: moveInputKey(input, field.key, key) },
                      );
                    }}
                    onMove={(to) => {
                      setFields(move(fields, i, to), step("form.move"));
                      setOpen(to);
                    }}
                    onOpenChange={(o) => setOpen(o ? i : null)}
                    onPatch={(patch, key) => update(i, patch, `form.${i}.${key}`)}
                    onRemove={() => {
                      setFields(
                        fields.filter((_, j) => j !== i),
                        step("form.remove"),
                        { input: moveInputKey(input, field.key, undefined) },
                      );
                      setOpen(null);
                    }}
                    onRenameKey={(to) => {
                      if (fields.some((f, j) => j !== i && f.key === to)) return `Another field already has the key "${to}".`;
                      setFields(
                        fields.map((f, j) => (j === i ? { ...f, key: to } : f)),
                        step("form.key"),
                        { input: moveInputKey(input, field.key, to) },
                      );
                      return null;
                    }}
                    onType={(type) => update(i, changeFieldType(field, type), step("form.type"))}
                  />
                </div>
              </li>
            ))}
          </ol>
          {readOnly ? null : (
            <Button
              className="self-start"
              size="sm"
              variant="secondary"
              onPress={() => {
                const key = freshKey(fields);
                setFields([...fields, { key, type: "text", label: `Field ${fields.length + 1}`, required: false }], step("form.add"));
                setOpen(fields.length);
              }}
            >
              <Plus aria-hidden className="size-4" />
              Add field
            </Button>
          )}
        </>
      )}

      <FormPreview form={form} input={input} namespace={namespace} outcomes={outcomes} fields={fields} />
    </section>
  );
}

function FieldCard({
  field,
  index,
  count,
  open,
  onOpenChange,
  problems,
  readOnly,
  defaultValue,
  completions,
  ref_,
  onPatch,
  onType,
  onRenameKey,
  onDefault,
  onLabel,
  onMove,
  onRemove,
}: {
  field: HumanField;
  index: number;
  count: number;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  problems: readonly string[];
  readOnly: boolean;
  defaultValue: unknown;
  completions?: CompletionSource;
  ref_: string;
  onPatch: (patch: Partial<HumanField>, key: string) => void;
  onType: (type: HumanFieldType) => void;
  onRenameKey: (to: string) => string | null;
  /** The default as typed; stored typed (defaultFromText). */
  onDefault: (text: string) => void;
  onLabel: (label: string) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
}) {
  const n = index + 1;
  const [keyError, setKeyError] = useState<string | null>(null);
  const textual = field.type === "text" || field.type === "textarea" || field.type === "email" || field.type === "url";
  const defaultText = defaultToText(defaultValue);
  const title = field.label || field.key;
  return (
    <Disclosure className="rounded-xl border border-separator" data-field-key={field.key} data-invalid={problems.length > 0 || undefined} isExpanded={open} onExpandedChange={onOpenChange}>
      <div className="flex items-center gap-1 pr-1">
        <Disclosure.Heading className="min-w-0 flex-1">
          <Disclosure.Trigger aria-label={`Field ${n}: ${title}`} className="flex w-full min-w-0 items-center gap-2 px-3 py-2 text-left text-sm">
            <span className="min-w-0 flex-1 truncate font-medium text-foreground">
              {title}
              {field.required ? <span className="text-danger"> *</span> : null}
            </span>
            <Chip size="sm" variant="secondary">
              {HUMAN_FIELD_TYPE_LABELS[field.type]}
            </Chip>
            {problems.length > 0 ? (
              <Chip color="danger" size="sm" variant="soft">
                {problems.length}
              </Chip>
            ) : null}
            <Disclosure.Indicator />
          </Disclosure.Trigger>
        </Disclosure.Heading>
        {readOnly ? null : (
          <>
            <Button aria-label={`Move field ${n} up`} isDisabled={index === 0} isIconOnly size="sm" variant="ghost" onPress={() => onMove(index - 1)}>
              <ArrowUp aria-hidden className="size-4" />
            </Button>
            <Button aria-label={`Move field ${n} down`} isDisabled={index === count - 1} isIconOnly size="sm" variant="ghost" onPress={() => onMove(index + 1)}>
              <ArrowDown aria-hidden className="size-4" />
            </Button>
            <Button aria-label={`Remove field ${n}`} isIconOnly size="sm" variant="ghost" onPress={onRemove}>
              <Trash2 aria-hidden className="size-4" />
            </Button>
          </>
        )}
      </div>
      <Disclosure.Content>
        <Disclosure.Body className="flex flex-col gap-3 px-3 pb-3">
          {open ? (
            <>
              {problems.length > 0 ? (
                <ul className="flex flex-col gap-0.5 text-xs text-danger">
                  {problems.map((p) => (
                    <li key={p}>{p}</li>
                  ))}
                </ul>
              ) : null}
              <OptionSelect isDisabled={readOnly} label="Type" options={FIELD_TYPE_OPTIONS} value={field.type} onChange={onType} />
              <TextField isReadOnly={readOnly} value={field.label} onChange={onLabel}>
                <Label>Label</Label>
                <Input />
              </TextField>
              <div className="flex flex-col gap-1">
                <DraftText
                  description={`The data's key: the output's ${ref_}.output.${field.key}.`}
                  invalid={keyError !== null}
                  label="Key"
                  mono
                  readOnly={readOnly}
                  value={field.key}
                  onCommit={(to) => setKeyError(onRenameKey(to.trim() || keyFromLabel(field.label)))}
                />
                {keyError ? <p className="text-xs text-danger">{keyError}</p> : null}
              </div>
              <FlagSwitch label="Required" readOnly={readOnly} selected={field.required} onChange={(required) => onPatch({ required }, step("required"))} />
              {field.type === "number" ? (
                <>
                  <div className="flex gap-2">
                    <OptionalNumber integer={field.integer} label="Minimum" readOnly={readOnly} value={field.minimum} onChange={(minimum) => onPatch({ minimum }, "minimum")} />
                    <OptionalNumber integer={field.integer} label="Maximum" readOnly={readOnly} value={field.maximum} onChange={(maximum) => onPatch({ maximum }, "maximum")} />
                  </div>
                  <FlagSwitch label="Whole numbers only" readOnly={readOnly} selected={field.integer === true} onChange={(integer) => onPatch({ integer: integer || undefined }, step("integer"))} />
                </>
              ) : null}
              {textual ? (
                <>
                  <div className="flex gap-2">
                    <OptionalNumber integer label="Min length" readOnly={readOnly} value={field.minLength} onChange={(minLength) => onPatch({ minLength }, "minLength")} />
                    <OptionalNumber integer label="Max length" readOnly={readOnly} value={field.maxLength} onChange={(maxLength) => onPatch({ maxLength }, "maxLength")} />
                  </div>
                  <TextField isReadOnly={readOnly} value={field.pattern ?? ""} onChange={(pattern) => onPatch({ pattern: pattern || undefined }, "pattern")}>
                    <Label>Pattern</Label>
                    <Input className="font-mono" placeholder="^[A-Z]{3}-\d+$" spellCheck={false} />
                    <Description>A regular expression the whole value must match.</Description>
                  </TextField>
                </>
              ) : null}
              {field.type === "select" || field.type === "multiselect" ? (
                <DraftText
                  description="One per line."
                  label="Options"
                  multiline
                  readOnly={readOnly}
                  value={(field.options ?? []).join("\n")}
                  onCommit={(text) =>
                    onPatch(
                      {
                        options: text
                          .split("\n")
                          .map((o) => o.trim())
                          .filter((o) => o !== ""),
                      },
                      step("options"),
                    )
                  }
                />
              ) : null}
              <TextField isReadOnly={readOnly} value={field.help ?? ""} onChange={(help) => onPatch({ help: help || undefined }, "help")}>
                <Label>Help text</Label>
                <Input />
              </TextField>
              <div className="flex flex-col gap-1">
                <span className="text-sm font-medium text-foreground">{field.readOnly ? "Value" : "Default value"}</span>
                <CodeEditor
                  ariaLabel={field.readOnly ? "Value" : "Default value"}
                  completions={completions}
                  language="text"
                  placeholder="${workflow.input.amount}"
                  readOnly={readOnly}
                  singleLine
                  value={defaultText}
                  onChange={onDefault}
                />
                <Description>An expression or a value, resolved when the task opens (stored as the node&apos;s input.{field.key}).</Description>
              </div>
              <FlagSwitch
                description="Shown to the assignee, never editable: context from the run. The server keeps the pre-filled value."
                label="Read-only context"
                readOnly={readOnly}
                selected={field.readOnly === true}
                onChange={(ro) => onPatch({ readOnly: ro || undefined }, step("readOnly"))}
              />
            </>
          ) : null}
        </Disclosure.Body>
      </Disclosure.Content>
    </Disclosure>
  );
}

/** The form as the assignee will see it, redrawn on every edit; Submit checks it against the schema and shows the data. */
function FormPreview({ form, input, outcomes, fields, namespace }: { form: Json; input: Json | undefined; outcomes: readonly string[]; fields: HumanField[] | null; namespace?: string }) {
  const [result, setResult] = useState<string | null>(null);
  const templateRef = isRecord(form.template) ? (form.template as { name: string; version?: number }) : undefined;
  const inline = isRecord(form.schema) ? { schema: form.schema, uiSchema: isRecord(form.uiSchema) ? form.uiSchema : {} } : null;
  const schemaKey = JSON.stringify([form, input]);
  useEffect(() => setResult(null), [schemaKey]);
  return (
    <Disclosure className="rounded-xl border border-separator" defaultExpanded>
      <Disclosure.Heading>
        <Disclosure.Trigger className="flex w-full items-center gap-2 px-3 py-2.5 text-left text-sm font-medium text-foreground">
          <span className="flex-1">Preview</span>
          <Disclosure.Indicator />
        </Disclosure.Trigger>
      </Disclosure.Heading>
      <Disclosure.Content>
        <Disclosure.Body aria-label="Form preview" className="flex flex-col gap-3 px-3 pb-3" role="region">
          {templateRef ? (
            <TemplateFormPreview key={schemaKey} namespace={namespace} outcomes={outcomes} template={templateRef} onResult={setResult} />
          ) : (
            <HumanTaskForm
              key={schemaKey}
              formData={previewData(fields ?? [], input)}
              idPrefix="preview"
              outcomes={outcomes}
              schema={inline?.schema ?? { type: "object", properties: {} }}
              uiSchema={previewUiSchema(inline?.uiSchema ?? {}, input)}
              onSubmit={(outcome, data) => setResult(`${outcome ? `${outcome}: ` : ""}${JSON.stringify(data)}`)}
            />
          )}
          {result ? (
            <p className="rounded-lg bg-default px-3 py-2 font-mono text-xs break-all text-foreground" data-testid="preview-result">
              {result}
            </p>
          ) : null}
        </Disclosure.Body>
      </Disclosure.Content>
    </Disclosure>
  );
}

const ACTION_OPTIONS: readonly SelectOption<EscalationStep["action"]>[] = [
  { id: "reassign", label: "Reassign" },
  { id: "timeout", label: "Time out" },
  { id: "complete", label: "Complete with an outcome" },
];
const FIELD_TYPE_OPTIONS: readonly SelectOption<HumanFieldType>[] = HUMAN_FIELD_TYPES.map((t) => ({ id: t, label: HUMAN_FIELD_TYPE_LABELS[t] }));

/** The chain fired after the due time: reassign, time out or complete, in order. */
function EscalationEditor({ node, outcomes, readOnly, onChange }: { node: WorkflowNode; outcomes: readonly string[]; readOnly: boolean; onChange: (next: WorkflowNode, field: string) => void }) {
  const raw = (node as { escalation?: unknown }).escalation;
  const steps: EscalationStep[] = Array.isArray(raw) ? (raw.filter(isRecord) as EscalationStep[]) : [];
  const dueIn = (node as { dueIn?: unknown }).dueIn;
  const set = (next: EscalationStep[], key: string) => onChange(withField(node, "escalation", next.length > 0 ? next : undefined), key);
  return (
    <section aria-label="Escalation" className="flex flex-col gap-3">
      <h3 className="text-[11px] font-semibold tracking-wide text-muted uppercase">Escalation</h3>
      <Description>
        {dueIn ? "Fired in order: the first step when the task is due, each next one at the deadline the step before set." : "Set Due in above for the chain to start."}
      </Description>
      {steps.length === 0 ? <p className="text-xs text-muted">No escalation: an overdue task just stays overdue.</p> : null}
      <ol aria-label="Escalation steps" className="flex flex-col gap-2">
        {steps.map((s, i) => {
          const n = i + 1;
          const replace = (next: EscalationStep, key: string) => set(steps.map((old, j) => (j === i ? next : old)), key);
          return (
            <li key={i} aria-label={`Escalation step ${n}`} className="flex flex-col gap-2 rounded-xl border border-separator p-3" role="group">
              <div className="flex items-center gap-1">
                <OptionSelect
                  ariaLabel={`Step ${n} action`}
                  className="min-w-0 flex-1"
                  isDisabled={readOnly}
                  options={ACTION_OPTIONS}
                  value={s.action}
                  onChange={(action) =>
                    replace(action === "reassign" ? { action: "reassign", assignee: "anyone" } : action === "complete" ? { action: "complete", outcome: outcomes[0] ?? "" } : { action: "timeout" }, step("escalation.action"))
                  }
                />
                {readOnly ? null : (
                  <>
                    <Button aria-label={`Move step ${n} up`} isDisabled={i === 0} isIconOnly size="sm" variant="ghost" onPress={() => set(move(steps, i, i - 1), step("escalation.move"))}>
                      <ArrowUp aria-hidden className="size-4" />
                    </Button>
                    <Button aria-label={`Move step ${n} down`} isDisabled={i === steps.length - 1} isIconOnly size="sm" variant="ghost" onPress={() => set(move(steps, i, i + 1), step("escalation.move"))}>
                      <ArrowDown aria-hidden className="size-4" />
                    </Button>
                    <Button aria-label={`Remove step ${n}`} isIconOnly size="sm" variant="ghost" onPress={() => set(steps.filter((_, j) => j !== i), step("escalation.remove"))}>
                      <Trash2 aria-hidden className="size-4" />
                    </Button>
                  </>
                )}
              </div>
              {s.action === "reassign" ? (
                <>
                  <AssigneePicker
                    label={`Step ${n} assignee`}
                    readOnly={readOnly}
                    value={s.assignee}
                    onChange={(text, coalesce) => replace({ ...s, assignee: text ?? "anyone" }, coalesce ? `escalation.${i}.assignee` : step("escalation.assignee"))}
                  />
                  <TextField isReadOnly={readOnly} value={s.dueIn ?? ""} onChange={(v) => replace(v ? { ...s, dueIn: v } : { action: "reassign", assignee: s.assignee }, `escalation.${i}.dueIn`)}>
                    <Label>{`Step ${n} new deadline`}</Label>
                    <Input placeholder="1d" spellCheck={false} />
                    <Description>From the reassignment; empty: no further deadline.</Description>
                  </TextField>
                </>
              ) : null}
              {s.action === "complete" ? (
                <OptionSelect
                  isDisabled={readOnly}
                  label="Outcome"
                  options={outcomes.map((o) => ({ id: o, label: o }))}
                  value={outcomes.includes(s.outcome) ? s.outcome : null}
                  onChange={(outcome) => replace({ ...s, outcome }, step("escalation.outcome"))}
                />
              ) : null}
              {s.action === "timeout" ? <p className="text-xs text-muted">The task times out; the node&apos;s retry policy applies.</p> : null}
            </li>
          );
        })}
      </ol>
      {readOnly ? null : (
        <Button className="self-start" size="sm" variant="secondary" onPress={() => set([...steps, steps.length === 0 ? { action: "reassign", assignee: "anyone" } : { action: "timeout" }], step("escalation.add"))}>
          <Plus aria-hidden className="size-4" />
          Add step
        </Button>
      )}
    </section>
  );
}
