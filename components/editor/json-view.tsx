"use client";

import { Alert } from "@heroui/react";
import { useEffect, useMemo, useRef, useState } from "react";
import type { WorkflowDefinition } from "@/engine";
import { CodeEditor } from "./code-editor";
import type { CodeDiagnostic } from "./code-editor";
import { useEditor, useEditorStore } from "./editor-context";
import { definitionText, drawableProblem, locateProblems, parseJsonText, shareUnchanged } from "./json-text";
import type { TextProblem } from "./json-text";

/** Typing pauses this long before the text is parsed and applied. */
const APPLY_DELAY_MS = 250;

/**
 * The definition as JSON, editable. It is a view of the store's definition,
 * not a copy: a valid edit replaces the definition (and the diagram redraws at
 * once); text that is not JSON, or not drawable, is marked where it breaks
 * and the last valid definition stays on the canvas. Edits from anywhere else
 * (canvas, inspector, undo) rewrite the text.
 */
export function JsonView() {
  const store = useEditorStore();
  const definition = useEditor((s) => s.definition);
  const problems = useEditor((s) => s.problems);
  const readOnly = useEditor((s) => s.readOnly);
  const [text, setText] = useState(() => definitionText(definition));
  const [broken, setBroken] = useState<TextProblem | null>(null);
  /** The definition this text was last in sync with. */
  const synced = useRef<WorkflowDefinition>(definition);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    if (definition === synced.current) return;
    synced.current = definition;
    setText(definitionText(definition));
    setBroken(null);
  }, [definition]);


  const apply = (value: string) => {
    const parsed = parseJsonText(value);
    if (!parsed.ok) {
      setBroken(parsed.problem);
      return;
    }
    const problem = drawableProblem(parsed.value);
    if (problem) {
      setBroken({ from: 0, to: Math.min(1, value.length), line: 1, column: 1, message: problem });
      return;
    }
    setBroken(null);
    const current = store.getState().definition;
    const next = shareUnchanged(current, parsed.value as WorkflowDefinition);
    synced.current = next;
    store.getState().replaceDefinition(next, "Edit JSON", "json");
  };

  // Leaving the JSON view (or the page) applies a pending edit rather than dropping it.
  const latestApply = useRef<(() => void) | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
      latestApply.current?.();
    },
    [],
  );

  const onChange = (value: string) => {
    setText(value);
    latestApply.current = () => {
      latestApply.current = null;
      apply(value);
    };
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => latestApply.current?.(), APPLY_DELAY_MS);
  };

  // Validator problems are located only while the text is the definition (no pending or broken edit).
  const located = useMemo(() => (broken || text !== definitionText(synced.current) ? [] : locateProblems(text, problems)), [broken, text, problems]);
  const diagnostics: CodeDiagnostic[] = broken
    ? [{ from: broken.from, to: broken.to, severity: "error", message: broken.message }]
    : located.map((p) => ({ from: p.from, to: p.to, severity: "error", message: p.message }));

  return (
    <div className="flex h-full min-h-0 flex-col gap-2 p-3">
      {broken ? (
        <Alert role="alert" status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>
              Line {broken.line}, column {broken.column}: {broken.message}
            </Alert.Title>
            <Alert.Description>The diagram keeps the last valid version until this is fixed.</Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}
      <div className="min-h-0 flex-1 overflow-hidden rounded-xl border border-separator">
        <CodeEditor
          ariaLabel="Definition JSON"
          diagnostics={diagnostics}
          language="json"
          maxHeight="100%"
          minHeight="100%"
          readOnly={readOnly}
          value={text}
          onChange={onChange}
        />
      </div>
    </div>
  );
}
