"use client";

import { Button } from "@heroui/react";
import type Form from "@rjsf/core";
import type { ErrorTransformer, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { useMemo, useRef, useState } from "react";
import type { FieldError } from "./field-errors";
import { fieldErrorsToErrorSchema, unansweredErrors } from "./field-errors";
import { ThemedForm } from "./rjsf-theme";

export interface HumanTaskFormProps {
  schema: Record<string, unknown>;
  uiSchema?: Record<string, unknown>;
  /** The pre-fill (the task's input for each property). */
  formData?: Record<string, unknown>;
  /** One button per outcome, the first the primary one; none is a single Submit. */
  outcomes?: readonly string[];
  /** The server's verdict on the last submission, as JSON pointers. */
  fieldErrors?: readonly FieldError[];
  /** Called with valid data only (the schema checked in the browser first); outcome undefined when there are none. */
  onSubmit?: (outcome: string | undefined, data: Record<string, unknown>) => void;
  /** Nothing can be typed or pressed (not yours, already done, or a preview). */
  disabled?: boolean;
  /** The outcome being sent ("" for a plain Submit): its button spins, the others wait. */
  pendingOutcome?: string | null;
  /** Keeps ids unique when two forms share a page. */
  idPrefix?: string;
  /** Hides the buttons (the editor's preview shows them itself, inert). */
  hideButtons?: boolean;
}

/** Plainer words than ajv's for the messages a person sees most. */
const transformErrors: ErrorTransformer = (errors) =>
  errors.map((e) => {
    if (e.name === "required") return { ...e, message: "This field is required." };
    if (e.name === "format" && e.params && typeof e.params === "object" && "format" in e.params) {
      const format = String((e.params as { format: unknown }).format);
      const what = format === "email" ? "an email address" : format === "uri" ? "a URL (https://…)" : format === "date" ? "a date" : `a valid ${format}`;
      return { ...e, message: `Must be ${what}.` };
    }
    return e;
  });

/**
 * A human task's form: the JSON Schema rendered with the HeroUI theme,
 * checked in the browser by the same kind of validator the server runs (ajv),
 * with the server's own field errors drawn under the fields they name. Each
 * outcome is a submit button; the chosen one goes out with the data.
 */
export function HumanTaskForm({ schema, uiSchema, formData, outcomes, fieldErrors, onSubmit, disabled = false, pendingOutcome = null, idPrefix, hideButtons = false }: HumanTaskFormProps) {
  const formRef = useRef<Form>(null);
  const chosen = useRef<string | undefined>(undefined);
  const [data, setData] = useState<Record<string, unknown>>(() => formData ?? {});
  /** The data the server's current errors were given for. */
  const [submitted, setSubmitted] = useState<Record<string, unknown> | null>(null);
  const [errorsSeen, setErrorsSeen] = useState(fieldErrors);
  if (errorsSeen !== fieldErrors) {
    setErrorsSeen(fieldErrors);
    setSubmitted(data);
  }

  const extraErrors = useMemo(() => {
    const open = fieldErrors && fieldErrors.length > 0 ? unansweredErrors(fieldErrors, submitted ?? data, data) : [];
    return open.length > 0 ? fieldErrorsToErrorSchema(open) : undefined;
  }, [fieldErrors, submitted, data]);

  const buttons = outcomes && outcomes.length > 0 ? outcomes : [undefined];

  return (
    <ThemedForm
      ref={formRef}
      className="flex min-w-0 flex-col gap-5"
      disabled={disabled}
      extraErrors={extraErrors}
      formData={data}
      idPrefix={idPrefix ?? "root"}
      noHtml5Validate
      schema={schema}
      showErrorList={false}
      transformErrors={transformErrors}
      uiSchema={(uiSchema ?? {}) as UiSchema}
      validator={validator}
      onChange={(event) => setData((event.formData ?? {}) as Record<string, unknown>)}
      onSubmit={(event) => onSubmit?.(chosen.current, (event.formData ?? {}) as Record<string, unknown>)}
    >
      {hideButtons ? (
        <></>
      ) : (
        <div className="flex flex-wrap gap-2 border-t border-separator pt-4" data-slot="outcomes">
          {buttons.map((outcome, i) => (
            <Button
              key={outcome ?? "submit"}
              isDisabled={disabled || (pendingOutcome !== null && pendingOutcome !== (outcome ?? ""))}
              isPending={pendingOutcome !== null && pendingOutcome === (outcome ?? "")}
              variant={i === 0 ? "primary" : "secondary"}
              onPress={() => {
                chosen.current = outcome;
                formRef.current?.submit();
              }}
            >
              {outcome ?? "Submit"}
            </Button>
          ))}
        </div>
      )}
    </ThemedForm>
  );
}
