"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import type { JSX } from "react";
import { useCallback, useLayoutEffect, useMemo, useRef } from "react";
import type { Problem, WorkflowDefinition } from "@/engine";
import { expressionCompletionSource, expressionOptions } from "./expression-completions";
import type { ExpressionOption } from "./expression-completions";
import { FieldInput, NO_PROBLEMS } from "./fields";
import { FormFields } from "./form-fields";
import type { FieldSpec } from "./form-model";
import { assignProblems, fieldIds, setIn, settingsRelativePath, workflowFormModel } from "./form-model";
import { OtherProblems, ReadOnlyNote, SectionHeading } from "./node-inspector";

export interface WorkflowSettingsProps {
  definition: WorkflowDefinition;
  /** Problems without a node ref. */
  problems: readonly Problem[];
  readOnly: boolean;
  /** Only non-graph fields change. */
  onChange: (next: WorkflowDefinition, field: string) => void;
  /** False once the workflow has been saved: the name is its identity. */
  nameEditable: boolean;
}

/** The workflow's own settings, shown when nothing is selected. Same generated form as a node's. */
export function WorkflowSettings({ definition, problems, readOnly, onChange, nameEditable }: WorkflowSettingsProps): JSX.Element {
  const fields = workflowFormModel();
  const latest = useRef({ definition, onChange });
  useLayoutEffect(() => {
    latest.current = { definition, onChange };
  });

  const onValue = useCallback((spec: FieldSpec, value: unknown) => {
    const { definition: current, onChange: emit } = latest.current;
    emit(setIn(current, spec.path, value), spec.id);
  }, []);

  const optionsCache = useRef<{ definition: WorkflowDefinition; options: readonly ExpressionOption[] } | null>(null);
  const completions = useMemo(() => {
    // The output is built once every node has finished: every ref is readable.
    const options = () => {
      const def = latest.current.definition;
      if (optionsCache.current?.definition === def) return optionsCache.current.options;
      const computed = expressionOptions(def, null, null);
      optionsCache.current = { definition: def, options: computed };
      return computed;
    };
    const sources = new Map<string, CompletionSource>();
    for (const f of fields) if (f.completions) sources.set(f.id, expressionCompletionSource(options));
    return sources;
  }, [fields]);

  const ids = useMemo(() => fieldIds(fields), [fields]);
  const assigned = useMemo(() => assignProblems(problems, ids, settingsRelativePath), [problems, ids]);

  const render = useCallback(
    (spec: FieldSpec) =>
      spec.id === "name" ? (
        <FieldInput
          problems={assigned.byField.get("name") ?? NO_PROBLEMS}
          readOnly={readOnly || !nameEditable}
          spec={nameEditable ? spec : { ...spec, description: "A saved workflow keeps its name: it is the workflow's identity. Save as a new workflow to rename it." }}
          value={definition.name}
          onValue={onValue}
        />
      ) : undefined,
    [assigned, readOnly, nameEditable, definition.name, onValue],
  );

  return (
    <aside aria-label="Inspector" className="flex min-w-0 flex-col gap-5 p-4" data-panel="workflow" data-readonly={readOnly || undefined}>
      <header>
        <h2 className="text-base font-semibold tracking-tight text-foreground">Workflow settings</h2>
        <p className="text-xs text-muted">Select a node to edit it; these apply to the whole workflow.</p>
      </header>
      {readOnly ? <ReadOnlyNote /> : null}
      {assigned.other.length > 0 ? <OtherProblems problems={assigned.other} /> : null}
      <section aria-label="Workflow" className="flex flex-col gap-4">
        <SectionHeading>Workflow</SectionHeading>
        <FormFields assigned={assigned} completions={completions} fields={fields} readOnly={readOnly} render={render} target={definition} onValue={onValue} />
      </section>
    </aside>
  );
}
