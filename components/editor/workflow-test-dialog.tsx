"use client";

import { Alert, Description, Label } from "@heroui/react";
import { useMutation } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect, useMemo, useState } from "react";
import type { WorkflowDefinition } from "@/engine";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useTRPC } from "../trpc";
import { FormDialog } from "../ui/form-dialog";
import { CodeEditor } from "./code-editor";
import type { CodeDiagnostic } from "./code-editor";
import { formatJson, parseJson } from "./inspector/json-text";
import type { JsonSyntaxError } from "./inspector/json-text";
import { checkRunInput, draftsFor, inputFromDrafts, runFields } from "./run-input";

/** What a test run of the whole workflow came to (server/definitions/test-workflow.ts). */
export type WorkflowTestResult = Extract<inferRouterOutputs<AppRouter>["stepTests"]["runWorkflow"], { ok: true }>;

/**
 * **Test workflow**: asks for a sample workflow input — the run dialog's
 * input, as JSON, prefilled from the input schema's defaults and checked
 * against it the same way — then runs the draft on screen in the testkit on
 * the server. Nothing is saved or started; the result is handed up with the
 * definition it was run on.
 */
export function WorkflowTestDialog({
  namespace,
  definition,
  isOpen,
  onOpenChange,
  onResult,
}: {
  namespace: string;
  definition: WorkflowDefinition;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onResult: (result: WorkflowTestResult, tested: WorkflowDefinition, input: Record<string, unknown>) => void;
}) {
  const trpc = useTRPC();
  const schema = definition.inputSchema;
  const fields = useMemo(() => runFields(schema), [schema]);
  const [text, setText] = useState("{}");
  const [syntax, setSyntax] = useState<JsonSyntaxError | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const run = useMutation(trpc.stepTests.runWorkflow.mutationOptions());
  const { reset } = run;

  // Each opening starts from the schema's defaults, as the run dialog does.
  useEffect(() => {
    if (!isOpen) return;
    setText(fields ? formatJson(inputFromDrafts(fields, draftsFor(fields)).input) : "{}");
    setSyntax(null);
    setProblems([]);
    reset();
  }, [isOpen, fields, reset]);

  const diagnostics = useMemo<readonly CodeDiagnostic[]>(() => (syntax ? [{ from: syntax.from, to: syntax.to, severity: "error", message: syntax.message }] : []), [syntax]);

  function submit() {
    reset();
    const parsed = parseJson(text, true);
    if (!parsed.ok) {
      setSyntax(parsed.error);
      setProblems([parsed.error.message]);
      return;
    }
    const input = (parsed.value ?? {}) as Record<string, unknown>;
    const found = checkRunInput(schema, input);
    if (found.length > 0) {
      setProblems(found.map((p) => (p.path.length > 0 ? `${p.path.join(".")}: ${p.message}` : p.message)));
      return;
    }
    setProblems([]);
    const tested = definition;
    run.mutate(
      { namespace, definition: tested, input },
      {
        onSuccess: (result) => {
          if (!result.ok) return;
          onResult(result, tested, input);
          onOpenChange(false);
        },
      },
    );
  }

  const messages = run.error ? [run.error.message] : problems;
  return (
    <FormDialog
      bodyClassName="mt-2"
      description={
        <>
          Runs the draft on screen, unsaved changes included, in memory: a pinned node answers with its pin, scripts and jq run in the sandbox, HTTP calls are made. A
          worker task without a pin fails the test. Nothing is stored.
        </>
      }
      isOpen={isOpen}
      isPending={run.isPending}
      label="Test workflow"
      pendingLabel="Testing…"
      size="lg"
      submitLabel="Test workflow"
      title={<>Test {definition.name}</>}
      validationBehavior="aria"
      onOpenChange={onOpenChange}
      onSubmit={submit}
    >
      {messages.length > 0 ? (
        <Alert status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{run.error ? "The workflow was not tested" : "Check the input"}</Alert.Title>
            <Alert.Description>
              {messages.length === 1 ? (
                messages[0]
              ) : (
                <ul className="list-disc pl-4">
                  {messages.map((m, i) => (
                    <li key={i}>{m}</li>
                  ))}
                </ul>
              )}
            </Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}
      <div className="flex flex-col gap-1">
        <Label>Sample input</Label>
        <CodeEditor
          ariaLabel="Test input JSON"
          diagnostics={diagnostics}
          language="json"
          maxHeight="50vh"
          minHeight="8rem"
          value={text}
          onChange={(next) => {
            setText(next);
            const parsed = parseJson(next, true);
            setSyntax(parsed.ok ? null : parsed.error);
          }}
        />
        <Description>A JSON object; its keys are {"${workflow.input.<key>}"}. Secrets read as ***.</Description>
      </div>
    </FormDialog>
  );
}
