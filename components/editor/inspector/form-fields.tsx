"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import type { Problem } from "@/engine";
import { FieldInput, NO_PROBLEMS } from "./fields";
import type { AssignedProblems, FieldSpec } from "./form-model";
import { getIn } from "./form-model";

export interface FormFieldsProps {
  fields: readonly FieldSpec[];
  /** The object the field paths start from: the node, or the definition. */
  target: object;
  assigned: AssignedProblems;
  readOnly: boolean;
  onValue: (spec: FieldSpec, value: unknown) => void;
  /** The completion source of each field that completes (by field id). */
  completions: ReadonlyMap<string, CompletionSource>;
  /** For `script` fields whose language depends on the value being edited (SWITCH). */
  scriptLanguage?: (spec: FieldSpec) => "javascript" | "jq" | "text";
  /** Fields rendered by the caller instead (ref, a locked name). */
  render?: (spec: FieldSpec) => React.ReactNode | undefined;
}

/** A list of fields, groups recursing into their children. */
export function FormFields(props: FormFieldsProps) {
  return props.fields.map((spec) => <FormField key={spec.id} {...props} spec={spec} />);
}

function FormField({ spec, target, assigned, readOnly, onValue, completions, scriptLanguage, render, fields: _fields }: FormFieldsProps & { spec: FieldSpec }) {
  const custom = render?.(spec);
  if (custom !== undefined) return custom;
  const value = getIn(target, spec.path);
  const problems: readonly Problem[] = assigned.byField.get(spec.id) ?? NO_PROBLEMS;
  const language = spec.kind === "script" ? (scriptLanguage?.(spec) ?? (spec.language === "jq" ? "jq" : "javascript")) : undefined;
  if (spec.kind === "group") {
    return (
      <FieldInput problems={problems} readOnly={readOnly} spec={spec} value={value} onValue={onValue}>
        <FormFields assigned={assigned} completions={completions} fields={spec.children ?? []} readOnly={readOnly} render={render} scriptLanguage={scriptLanguage} target={target} onValue={onValue} />
      </FieldInput>
    );
  }
  return <FieldInput completions={completions.get(spec.id)} problems={problems} readOnly={readOnly} scriptLanguage={language} spec={spec} value={value} onValue={onValue} />;
}
