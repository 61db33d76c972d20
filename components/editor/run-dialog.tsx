"use client";

import { Alert, Description, FieldError, Input, Label, ListBox, Select, Switch, TextField, ToggleButton, ToggleButtonGroup } from "@heroui/react";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import type { Key } from "react";
import { useEffect, useMemo, useState } from "react";
import type { WorkflowDefinition } from "@/engine";
import { useTRPC } from "../trpc";
import { FormDialog } from "../ui/form-dialog";
import { CodeEditor } from "./code-editor";
import type { CodeDiagnostic } from "./code-editor";
import { formatJson, parseJson } from "./inspector/json-text";
import type { JsonSyntaxError } from "./inspector/json-text";
import { checkRunInput, draftsFor, inputFromDrafts, optionKey, problemsByField, runFields } from "./run-input";
import type { RunDraft, RunField } from "./run-input";

interface Errors {
  byField: Record<string, string[]>;
  other: string[];
}

const NO_ERRORS: Errors = { byField: {}, other: [] };

/**
 * Starts a run of the saved workflow: a form generated from its inputSchema
 * (or raw JSON, always available, and the only way without a schema). The
 * input is checked here exactly as the server checks it (run-input.ts) and the
 * server's refusals land on the same fields. On success, the run's live view.
 */
export function RunDialog({ namespace, definition, isOpen, onOpenChange }: { namespace: string; definition: WorkflowDefinition; isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const schema = definition.inputSchema;
  const fields = useMemo(() => runFields(schema), [schema]);
  const [mode, setMode] = useState<"form" | "json">(fields ? "form" : "json");
  const [drafts, setDrafts] = useState<Record<string, RunDraft>>(() => (fields ? draftsFor(fields) : {}));
  const [jsonText, setJsonText] = useState("{}");
  const [jsonError, setJsonError] = useState<JsonSyntaxError | null>(null);
  const [correlationId, setCorrelationId] = useState("");
  const [localErrors, setLocalErrors] = useState<Errors>(NO_ERRORS);

  const start = useMutation(
    trpc.runs.start.mutationOptions({
      onSuccess: ({ id }) => {
        onOpenChange(false);
        router.push(`/executions/${encodeURIComponent(id)}`);
      },
    }),
  );
  const { reset } = start;

  // Each opening starts from the schema's defaults.
  useEffect(() => {
    if (!isOpen) return;
    setMode(fields ? "form" : "json");
    setDrafts(fields ? draftsFor(fields) : {});
    setJsonText(fields ? formatJson(inputFromDrafts(fields, draftsFor(fields)).input) : "{}");
    setJsonError(null);
    setCorrelationId("");
    setLocalErrors(NO_ERRORS);
    reset();
  }, [isOpen, fields, reset]);

  const serverErrors = useMemo<Errors>(() => {
    const error = start.error;
    if (!error) return NO_ERRORS;
    const inputProblems = error.data?.inputProblems;
    if (inputProblems && inputProblems.length > 0) return problemsByField(inputProblems, mode === "form" ? fields : null);
    return { byField: {}, other: [error.message] };
  }, [start.error, fields, mode]);
  const errors: Errors = start.error ? serverErrors : localErrors;

  const jsonDiagnostics = useMemo<readonly CodeDiagnostic[]>(() => (jsonError ? [{ from: jsonError.from, to: jsonError.to, severity: "error", message: jsonError.message }] : []), [jsonError]);

  function switchMode(next: "form" | "json") {
    if (next === mode || !fields) return;
    setLocalErrors(NO_ERRORS);
    reset();
    if (next === "json") {
      // Whatever the form holds so far, even with fields still invalid.
      setJsonText(formatJson(inputFromDrafts(fields, drafts).input));
      setJsonError(null);
      setMode("json");
      return;
    }
    const parsed = parseJson(jsonText, true);
    if (!parsed.ok) {
      setJsonError(parsed.error);
      setLocalErrors({ byField: {}, other: [`Fix the JSON before switching to the form: ${parsed.error.message}`] });
      return;
    }
    setDrafts(draftsFor(fields, (parsed.value ?? {}) as Record<string, unknown>, false));
    setMode("form");
  }

  function submit() {
    reset();
    let input: Record<string, unknown>;
    if (mode === "form" && fields) {
      const result = inputFromDrafts(fields, drafts);
      if (Object.keys(result.errors).length > 0) {
        setLocalErrors({ byField: Object.fromEntries(Object.entries(result.errors).map(([k, v]) => [k, [v]])), other: [] });
        return;
      }
      input = result.input;
    } else {
      const parsed = parseJson(jsonText, true);
      if (!parsed.ok) {
        setJsonError(parsed.error);
        setLocalErrors({ byField: {}, other: [parsed.error.message] });
        return;
      }
      input = (parsed.value ?? {}) as Record<string, unknown>;
    }
    const problems = checkRunInput(schema, input);
    if (problems.length > 0) {
      setLocalErrors(problemsByField(problems, mode === "form" ? fields : null));
      return;
    }
    setLocalErrors(NO_ERRORS);
    const id = correlationId.trim();
    start.mutate({ namespace, name: definition.name, ...(definition.version !== undefined ? { version: definition.version } : {}), input, ...(id ? { correlationId: id } : {}) });
  }

  return (
    <FormDialog
      bodyClassName="mt-2"
      description={
        <>
          Starts{" "}
          <span className="font-medium text-foreground">{definition.version !== undefined ? `version ${definition.version}` : "the latest version"}</span> as saved, then
          opens its live view.
        </>
      }
      isOpen={isOpen}
      isPending={start.isPending}
      label="Run workflow"
      pendingLabel="Starting…"
      size="lg"
      submitLabel="Start run"
      title={<>Run {definition.name}</>}
      validationBehavior="aria"
      onOpenChange={onOpenChange}
      onSubmit={submit}
    >
      {errors.other.length > 0 ? (
        <Alert status="danger">
          <Alert.Indicator />
          <Alert.Content>
            <Alert.Title>{start.error ? "The run was not started" : "Check the input"}</Alert.Title>
            <Alert.Description>
              {errors.other.length === 1 ? (
                errors.other[0]
              ) : (
                <ul className="list-disc pl-4">
                  {errors.other.map((m, i) => (
                    <li key={i}>{m}</li>
                  ))}
                </ul>
              )}
            </Alert.Description>
          </Alert.Content>
        </Alert>
      ) : null}

      {fields ? (
        <ToggleButtonGroup
          aria-label="Input as"
          className="self-start"
          disallowEmptySelection
          selectedKeys={[mode]}
          selectionMode="single"
          size="sm"
          onSelectionChange={(keys) => {
            const [next] = [...keys];
            if (next === "form" || next === "json") switchMode(next);
          }}
        >
          <ToggleButton id="form">Form</ToggleButton>
          <ToggleButton id="json">JSON</ToggleButton>
        </ToggleButtonGroup>
      ) : (
        <p className="text-sm text-muted">This workflow has no input schema: write its input as a JSON object.</p>
      )}

      {mode === "form" && fields ? (
        <div className="flex flex-col gap-4">
          {fields.map((field) => (
            <RunInputField
              key={field.key}
              draft={drafts[field.key]}
              errors={errors.byField[field.key] ?? []}
              field={field}
              onDraft={(draft) => {
                setDrafts((d) => ({ ...d, [field.key]: draft }));
                if (errors.byField[field.key]) setLocalErrors((e) => ({ ...e, byField: { ...e.byField, [field.key]: [] } }));
              }}
            />
          ))}
        </div>
      ) : (
        <div className="flex flex-col gap-1">
          <Label id="run-input-json-label">Input JSON</Label>
          <CodeEditor
            ariaLabel="Input JSON"
            diagnostics={jsonDiagnostics}
            language="json"
            maxHeight="50vh"
            minHeight="8rem"
            value={jsonText}
            onChange={(text) => {
              setJsonText(text);
              const parsed = parseJson(text, true);
              setJsonError(parsed.ok ? null : parsed.error);
            }}
          />
          {jsonError ? <p className="text-xs text-danger">{jsonError.message}</p> : <Description>A JSON object; its keys are {"${workflow.input.<key>}"}.</Description>}
          {Object.entries(errors.byField).flatMap(([k, ms]) => ms.map((m, i) => <p key={`${k}-${i}`} className="text-xs text-danger">{`${k}: ${m}`}</p>))}
        </div>
      )}

      <TextField maxLength={255} name="correlationId" value={correlationId} onChange={setCorrelationId}>
        <Label>Correlation id</Label>
        <Input placeholder="optional" spellCheck={false} />
        <Description>Yours to choose: find this run by it later, e.g. an order number.</Description>
      </TextField>
    </FormDialog>
  );
}

function RunInputField({ field, draft, errors, onDraft }: { field: RunField; draft: RunDraft; errors: readonly string[]; onDraft: (draft: RunDraft) => void }) {
  const invalid = errors.length > 0;
  const description = field.description ? <Description>{field.description}</Description> : null;
  const placeholder = field.defaultValue === undefined ? undefined : typeof field.defaultValue === "string" ? field.defaultValue : JSON.stringify(field.defaultValue);
  switch (field.kind) {
    case "boolean":
      return (
        <Switch isInvalid={invalid} isSelected={draft === true} name={field.key} onChange={(selected) => onDraft(selected)}>
          <Switch.Content>
            <Switch.Control>
              <Switch.Thumb />
            </Switch.Control>
            {field.title}
          </Switch.Content>
          {description}
          {invalid ? <p className="text-xs text-danger">{errors.join(" ")}</p> : null}
        </Switch>
      );
    case "enum":
      return (
        <Select
          isInvalid={invalid}
          isRequired={field.required}
          name={field.key}
          placeholder="Choose…"
          value={typeof draft === "string" && draft !== "" ? draft : null}
          onChange={(key: Key | null) => onDraft(key === null ? "" : String(key))}
        >
          <Label>{field.title}</Label>
          <Select.Trigger>
            <Select.Value />
            <Select.Indicator />
          </Select.Trigger>
          {description}
          <FieldError>{errors.join(" ")}</FieldError>
          <Select.Popover>
            <ListBox>
              {(field.options ?? []).map((option) => (
                <ListBox.Item key={optionKey(option)} id={optionKey(option)} textValue={optionKey(option)}>
                  {optionKey(option)}
                  <ListBox.ItemIndicator />
                </ListBox.Item>
              ))}
            </ListBox>
          </Select.Popover>
        </Select>
      );
    case "json":
      return (
        <div className="flex flex-col gap-1" data-invalid={invalid || undefined}>
          <Label>
            {field.title}
            {field.required ? <span className="text-danger"> *</span> : null}
          </Label>
          <div className={invalid ? "[&_.cm-editor]:border-danger" : undefined}>
            <CodeEditor
              ariaLabel={field.title}
              language="json"
              maxHeight="16rem"
              minHeight="3rem"
              placeholder={field.jsonType === "array" ? "[ … ]" : field.jsonType === "object" ? "{ … }" : "any JSON value"}
              value={typeof draft === "string" ? draft : ""}
              onChange={onDraft}
            />
          </div>
          {invalid ? <p className="text-xs text-danger">{errors.join(" ")}</p> : description}
        </div>
      );
    default:
      return (
        <TextField
          inputMode={field.kind === "string" ? undefined : field.kind === "integer" ? "numeric" : "decimal"}
          isInvalid={invalid}
          isRequired={field.required}
          name={field.key}
          value={typeof draft === "string" ? draft : ""}
          onChange={onDraft}
        >
          <Label>{field.title}</Label>
          <Input placeholder={placeholder} spellCheck={false} />
          {description}
          <FieldError>{errors.join(" ")}</FieldError>
        </TextField>
      );
  }
}
