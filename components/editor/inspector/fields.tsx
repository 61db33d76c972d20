"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import { Button, Description, FieldError, Input, Label, ListBox, NumberField, Select, Switch, TextArea, TextField } from "@heroui/react";
import { Plus, X } from "lucide-react";
import type { Key, ReactNode } from "react";
import { memo, useEffect, useMemo, useRef, useState } from "react";
import type { Problem } from "@/engine";
import { CodeEditor } from "../code-editor";
import type { CodeDiagnostic } from "../code-editor";
import type { FieldSpec } from "./form-model";
import { formatJson, parseJson } from "./json-text";
import type { JsonSyntaxError } from "./json-text";

/**
 * One input per field kind. Every input's accessible name is the field's
 * label (its title), so a test can `getByLabel("Task type")`. A value equal
 * to nothing typed is removed (undefined), never written as "" — defaults
 * stay the engine's, shown as placeholders.
 */

export interface FieldProps {
  spec: FieldSpec;
  value: unknown;
  /** The validator's problems for this field (and, for a group, inside it). */
  problems: readonly Problem[];
  readOnly: boolean;
  onValue: (spec: FieldSpec, value: unknown) => void;
  /** For fields with `completions`. */
  completions?: CompletionSource;
}

const NO_PROBLEMS: readonly Problem[] = [];

/** A default as text: how the placeholder and a select's "Default (…)" item show it. */
function defaultText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function placeholderOf(spec: FieldSpec): string | undefined {
  return defaultText(spec.defaultValue);
}

/** A warning says so: the definition is saved anyway (it resolves as Conductor resolves it). */
function messageOf(p: Problem): string {
  return p.severity === "warning" ? `Warning: ${p.message}` : p.message;
}

function messages(problems: readonly Problem[]): string {
  return problems.map(messageOf).join(" ");
}

/** Label, help text and errors around a field React Aria does not own (the CodeMirror ones). */
function FieldShell({ spec, problems, extraError, children, labelId }: { spec: FieldSpec; problems: readonly Problem[]; extraError?: string | null; children: ReactNode; labelId: string }) {
  const errors = [...problems.map(messageOf), ...(extraError ? [extraError] : [])];
  return (
    <div className="flex min-w-0 flex-col gap-1" data-field={spec.id} data-invalid={errors.length > 0 || undefined}>
      <Label id={labelId}>
        {spec.title}
        {spec.required ? <span className="text-danger"> *</span> : null}
      </Label>
      <div className={`min-w-0 ${errors.length > 0 ? "[&_.cm-editor]:border-danger" : ""}`}>{children}</div>
      {spec.description && errors.length === 0 ? <Description>{spec.description}</Description> : null}
      {errors.length > 0 ? (
        <p className="text-xs text-danger" data-slot="field-error">
          {errors.join(" ")}
        </p>
      ) : null}
    </div>
  );
}

function TextInput({ spec, value, problems, readOnly, onValue, multiline = false }: FieldProps & { multiline?: boolean }) {
  const text = typeof value === "string" ? value : "";
  const invalid = problems.length > 0;
  return (
    <TextField
      data-field={spec.id}
      isInvalid={invalid}
      isReadOnly={readOnly}
      isRequired={spec.required}
      name={spec.id}
      validationBehavior="aria"
      value={text}
      onChange={(next) => onValue(spec, next === "" ? undefined : next)}
    >
      <Label>{spec.label}</Label>
      {multiline ? <TextArea placeholder={placeholderOf(spec)} rows={2} /> : <Input placeholder={placeholderOf(spec)} spellCheck={false} />}
      {spec.description ? <Description>{spec.description}</Description> : null}
      <FieldError>{messages(problems)}</FieldError>
    </TextField>
  );
}

function IntegerInput({ spec, value, problems, readOnly, onValue }: FieldProps) {
  const number = typeof value === "number" ? value : Number.NaN;
  return (
    <NumberField
      data-field={spec.id}
      formatOptions={spec.kind === "integer" ? { useGrouping: false, maximumFractionDigits: 0 } : { useGrouping: false }}
      isInvalid={problems.length > 0}
      isReadOnly={readOnly}
      isRequired={spec.required}
      minValue={spec.minimum}
      name={spec.id}
      validationBehavior="aria"
      value={number}
      onChange={(next) => onValue(spec, Number.isNaN(next) ? undefined : next)}
    >
      <Label>{spec.label}</Label>
      {/* No stepper buttons: they would share the field's label ("Increase Retries"), and typing is how these are set. */}
      <NumberField.Group>
        <NumberField.Input placeholder={placeholderOf(spec)} />
      </NumberField.Group>
      {spec.description ? <Description>{spec.description}</Description> : null}
      <FieldError>{messages(problems)}</FieldError>
    </NumberField>
  );
}

function BooleanInput({ spec, value, problems, readOnly, onValue }: FieldProps) {
  const fallback = spec.kind === "flag" ? false : spec.defaultValue === true;
  const selected = typeof value === "boolean" ? value : fallback;
  return (
    <Switch
      data-field={spec.id}
      isDisabled={readOnly}
      isInvalid={problems.length > 0}
      isSelected={selected}
      name={spec.id}
      onChange={(next) => {
        // Back to the default is "not set": the engine's default applies, and nothing is written.
        if (spec.kind === "flag") onValue(spec, next ? true : undefined);
        else onValue(spec, next === fallback ? undefined : next);
      }}
    >
      <Switch.Content>
        <Switch.Control>
          <Switch.Thumb />
        </Switch.Control>
        {spec.label}
      </Switch.Content>
      {spec.description ? <Description>{spec.description}</Description> : null}
      {problems.length > 0 ? <p className="text-xs text-danger">{messages(problems)}</p> : null}
    </Switch>
  );
}

const UNSET = "__default__";

function EnumInput({ spec, value, problems, readOnly, onValue }: FieldProps) {
  const options = spec.options ?? [];
  const current = typeof value === "string" && options.includes(value) ? value : value === undefined && !spec.required ? UNSET : null;
  return (
    <Select
      data-field={spec.id}
      isDisabled={readOnly}
      isInvalid={problems.length > 0}
      isRequired={spec.required}
      name={spec.id}
      placeholder="Choose…"
      value={current}
      onChange={(key: Key | null) => onValue(spec, key === null || key === UNSET ? undefined : String(key))}
    >
      <Label>{spec.label}</Label>
      <Select.Trigger>
        <Select.Value />
        <Select.Indicator />
      </Select.Trigger>
      {spec.description ? <Description>{spec.description}</Description> : null}
      <FieldError>{messages(problems)}</FieldError>
      <Select.Popover>
        <ListBox>
          {spec.required ? null : (
            <ListBox.Item id={UNSET} textValue={spec.defaultValue === undefined ? "Not set" : `Default (${defaultText(spec.defaultValue)})`}>
              <span className="text-muted">{spec.defaultValue === undefined ? "Not set" : `Default (${defaultText(spec.defaultValue)})`}</span>
              <ListBox.ItemIndicator />
            </ListBox.Item>
          )}
          {options.map((option) => (
            <ListBox.Item key={option} id={option} textValue={option}>
              {option}
              <ListBox.ItemIndicator />
            </ListBox.Item>
          ))}
        </ListBox>
      </Select.Popover>
    </Select>
  );
}

/**
 * One list item, sent when it loses focus or on Enter — not per keystroke:
 * a SWITCH's edges hang on its case labels, and every intermediate label
 * would be a different case.
 */
function ListItemInput({ label, value, invalid, message, readOnly, onCommit }: { label: string; value: string; invalid: boolean; message: string; readOnly: boolean; onCommit: (value: string) => void }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const commit = () => {
    if (draft !== value) onCommit(draft);
  };
  return (
    <TextField
      aria-label={label}
      className="min-w-0 flex-1"
      isInvalid={invalid}
      isReadOnly={readOnly}
      validationBehavior="aria"
      value={draft}
      onBlur={commit}
      onChange={setDraft}
      onKeyDown={(event) => {
        if (event.key === "Enter") commit();
        if (event.key === "Escape") setDraft(value);
      }}
    >
      <Input spellCheck={false} />
      <FieldError>{message}</FieldError>
    </TextField>
  );
}

/** An editable list of strings (SWITCH cases, HUMAN outcomes, joinOn). */
function StringListInput({ spec, value, problems, readOnly, onValue }: FieldProps) {
  const items = Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))) : [];
  const set = (next: string[]) => onValue(spec, next.length === 0 && !spec.required ? undefined : next);
  const itemProblems = (i: number) => problems.filter((p) => p.path[p.path.length - 1] === i);
  const listProblems = problems.filter((p) => typeof p.path[p.path.length - 1] !== "number");
  return (
    <div aria-label={spec.label} className="flex flex-col gap-1.5" data-field={spec.id} role="group">
      <span className="text-sm font-medium text-foreground">{spec.title}</span>
      {items.length === 0 ? <p className="text-xs text-muted">None yet.</p> : null}
      <ul className="flex flex-col gap-1.5">
        {items.map((item, i) => {
          const own = itemProblems(i);
          return (
            // Index keys: items are plain strings that may repeat; editing one must not remount its input.
            <li key={i} className="flex items-start gap-1.5">
              <ListItemInput
                invalid={own.length > 0}
                label={`${spec.label} ${i + 1}`}
                message={messages(own)}
                readOnly={readOnly}
                value={item}
                onCommit={(next) => set(items.map((old, j) => (j === i ? next : old)))}
              />
              {readOnly ? null : (
                <Button aria-label={`Remove ${spec.label.toLowerCase()} item ${i + 1}`} isIconOnly size="sm" variant="ghost" onPress={() => set(items.filter((_, j) => j !== i))}>
                  <X aria-hidden className="size-4" />
                </Button>
              )}
            </li>
          );
        })}
      </ul>
      {readOnly ? null : (
        <Button className="self-start" size="sm" variant="secondary" onPress={() => set([...items, ""])}>
          <Plus aria-hidden className="size-4" />
          Add {spec.title.toLowerCase().replace(/s$/, "")}
        </Button>
      )}
      {spec.description ? <Description>{spec.description}</Description> : null}
      {listProblems.length > 0 ? <p className="text-xs text-danger">{messages(listProblems)}</p> : null}
    </div>
  );
}

/** `[{key, value}]` (workflow tags). */
function TagsInput({ spec, value, problems, readOnly, onValue }: FieldProps) {
  const text = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
  const tags = Array.isArray(value) ? (value as { key?: unknown; value?: unknown }[]).map((t) => ({ key: text(t.key), value: text(t.value) })) : [];
  const set = (next: { key: string; value: string }[]) => onValue(spec, next.length === 0 ? undefined : next);
  return (
    <div aria-label={spec.label} className="flex flex-col gap-1.5" data-field={spec.id} role="group">
      <span className="text-sm font-medium text-foreground">{spec.title}</span>
      {tags.length === 0 ? <p className="text-xs text-muted">None yet.</p> : null}
      {tags.map((tag, i) => (
        <div key={i} className="flex items-center gap-1.5">
          <TextField aria-label={`Tag ${i + 1} key`} className="min-w-0 flex-1" isReadOnly={readOnly} value={tag.key} onChange={(key) => set(tags.map((t, j) => (j === i ? { ...t, key } : t)))}>
            <Input placeholder="key" spellCheck={false} />
          </TextField>
          <TextField aria-label={`Tag ${i + 1} value`} className="min-w-0 flex-1" isReadOnly={readOnly} value={tag.value} onChange={(v) => set(tags.map((t, j) => (j === i ? { ...t, value: v } : t)))}>
            <Input placeholder="value" spellCheck={false} />
          </TextField>
          {readOnly ? null : (
            <Button aria-label={`Remove tag number ${i + 1}`} isIconOnly size="sm" variant="ghost" onPress={() => set(tags.filter((_, j) => j !== i))}>
              <X aria-hidden className="size-4" />
            </Button>
          )}
        </div>
      ))}
      {readOnly ? null : (
        <Button className="self-start" size="sm" variant="secondary" onPress={() => set([...tags, { key: "", value: "" }])}>
          <Plus aria-hidden className="size-4" />
          Add tag
        </Button>
      )}
      {problems.length > 0 ? <p className="text-xs text-danger">{messages(problems)}</p> : null}
    </div>
  );
}

/** A `${…}` text: one line of CodeMirror, for the completion popup. */
function ExpressionInput({ spec, value, problems, readOnly, onValue, completions }: FieldProps) {
  const text = typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
  return (
    <FieldShell labelId={`label-${spec.id}`} problems={problems} spec={spec}>
      <CodeEditor
        ariaLabel={spec.label}
        completions={spec.completions ? completions : undefined}
        language="text"
        placeholder={placeholderOf(spec)}
        readOnly={readOnly}
        singleLine
        value={text}
        onChange={(next) => onValue(spec, next === "" ? undefined : next)}
      />
    </FieldShell>
  );
}

/** A script: JavaScript, jq, or for SWITCH whatever its evaluator reads. */
function ScriptInput({ spec, value, problems, readOnly, onValue, language }: FieldProps & { language: "javascript" | "jq" }) {
  const text = typeof value === "string" ? value : "";
  return (
    <FieldShell labelId={`label-${spec.id}`} problems={problems} spec={spec}>
      <CodeEditor ariaLabel={spec.label} language={language} maxHeight="24rem" minHeight="4.5rem" readOnly={readOnly} value={text} onChange={(next) => onValue(spec, next === "" ? undefined : next)} />
    </FieldShell>
  );
}

/** The canonical text of a value, to tell "the value the text already means" from a new one pushed in. */
function canonical(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value);
}

/**
 * A JSON value in CodeMirror. The text is the field's own state: while it does
 * not parse, the error is marked inline and the last valid value stays in the
 * definition; each valid text is sent at once. A value changed elsewhere
 * (undo, the JSON view) replaces the text.
 */
function JsonInput({ spec, value, problems, readOnly, onValue, completions }: FieldProps) {
  const [text, setText] = useState(() => formatJson(value));
  const [error, setError] = useState<JsonSyntaxError | null>(null);
  const synced = useRef(canonical(value));

  useEffect(() => {
    const c = canonical(value);
    if (c === synced.current) return;
    synced.current = c;
    setText(formatJson(value));
    setError(null);
  }, [value]);

  const diagnostics = useMemo<readonly CodeDiagnostic[]>(() => (error ? [{ from: error.from, to: error.to, severity: "error", message: error.message }] : []), [error]);

  const onText = (next: string) => {
    setText(next);
    const parsed = parseJson(next, spec.jsonObject === true);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    const c = canonical(parsed.value);
    if (c === synced.current) return;
    synced.current = c;
    onValue(spec, parsed.value);
  };

  return (
    <FieldShell extraError={error ? `Not saved: ${error.message}. The last valid value is kept.` : null} labelId={`label-${spec.id}`} problems={problems} spec={spec}>
      <CodeEditor
        ariaLabel={spec.label}
        completions={spec.completions ? completions : undefined}
        diagnostics={diagnostics}
        language="json"
        maxHeight="24rem"
        minHeight="3rem"
        placeholder={spec.jsonObject ? '{ "key": "${workflow.input.value}" }' : placeholderOf(spec)}
        readOnly={readOnly}
        value={text}
        onChange={onText}
      />
    </FieldShell>
  );
}

/** Renders the input for one field; groups recurse through `renderChild`. */
export const FieldInput = memo(function FieldInput(props: FieldProps & { scriptLanguage?: "javascript" | "jq" | "text"; children?: ReactNode }) {
  const { spec } = props;
  switch (spec.kind) {
    case "text":
      return <TextInput {...props} />;
    case "multiline":
      return <TextInput {...props} multiline />;
    case "expression":
      return <ExpressionInput {...props} />;
    case "integer":
    case "number":
      return <IntegerInput {...props} />;
    case "boolean":
    case "flag":
      return <BooleanInput {...props} />;
    case "enum":
      return <EnumInput {...props} />;
    case "string-list":
      return <StringListInput {...props} />;
    case "tags":
      return <TagsInput {...props} />;
    case "json":
      return <JsonInput {...props} />;
    case "script":
      return props.scriptLanguage === "text" ? <TextInput {...props} /> : <ScriptInput {...props} language={props.scriptLanguage ?? "javascript"} />;
    case "group":
      return (
        <fieldset aria-label={spec.label} className="flex min-w-0 flex-col gap-4 rounded-xl border border-separator p-3" data-field={spec.id}>
          <legend className="px-1 text-sm font-medium text-foreground">{spec.title}</legend>
          {spec.description ? <Description className="-mt-2">{spec.description}</Description> : null}
          {props.problems.length > 0 ? <p className="-mt-2 text-xs text-danger">{messages(props.problems)}</p> : null}
          {props.children}
        </fieldset>
      );
  }
});

export { NO_PROBLEMS };
