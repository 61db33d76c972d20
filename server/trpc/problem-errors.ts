import { z } from "zod";
import type { Problem } from "@/engine";
import type { InputProblem } from "../executions/start-execution";

/**
 * The cause of a BAD_REQUEST whose reasons are a list rather than a sentence.
 * The errorFormatter (init.ts) copies the list into the error's `data`, so a
 * client reads it typed — `error.data.problems` — instead of parsing the
 * message: the editor marks each problem's node and field.
 */
export class DefinitionProblemsError extends Error {
  override name = "DefinitionProblemsError";
  constructor(readonly problems: Problem[]) {
    super(`The definition is not valid: ${problems.length === 1 ? "1 problem" : `${problems.length} problems`}`);
  }
}

/** A run's input refused by its workflow's inputSchema: every problem, each with its path inside the input. */
export class InputProblemsError extends Error {
  override name = "InputProblemsError";
  constructor(readonly problems: InputProblem[]) {
    super(`The input does not match the workflow's input schema: ${problems.length === 1 ? "1 problem" : `${problems.length} problems`}`);
  }
}

/** A human-task submission refused by its form's schema: each field's JSON pointer ("/amount") and message, for the form to mark. */
export class FieldErrorsError extends Error {
  override name = "FieldErrorsError";
  constructor(
    message: string,
    readonly fieldErrors: { path: string; message: string }[],
  ) {
    super(message);
  }
}

/**
 * A ZodError naming the given fields, for refusals a service finds after the
 * input parsed (a webhook naming a secret that does not exist): the error
 * formatter puts it in `data.zodError`, and a console form shows each message
 * next to its field. Made by a parse: a ZodError built with `new` is no
 * Error, and tRPC would wrap it.
 */
export function fieldIssues(issues: { path: (string | number)[]; message: string }[]): z.ZodError {
  const parsed = z
    .unknown()
    .superRefine((_, ctx) => {
      for (const issue of issues) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    })
    .safeParse(null);
  return parsed.error!;
}
