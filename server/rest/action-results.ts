import type { WorkflowActionDeps } from "../executions/actions/action-support";
import type { RestDeps } from "./define-route";
import type { HttpProblem } from "./problem";
import { validationProblem } from "./problem";

/** What the workflow actions and the human-task service need from a request's dependencies (REST's or Conductor's). */
export function actionDeps(deps: Pick<RestDeps, "db" | "blobs" | "now">): WorkflowActionDeps {
  return { db: deps.db, blobs: deps.blobs, ...(deps.now === undefined ? {} : { now: deps.now }) };
}

/**
 * A submission that failed its form's schema (refusal code "invalid-data"):
 * each field error as a 400 pointer under `base` (the body member holding the
 * form data), or `whole` (by default `base`) with the message when the refusal
 * names no field — an outcome missing, say.
 */
export function formDataProblem(base: string, refusal: { message: string; fieldErrors?: { path: string; message: string }[] }, whole = base): HttpProblem {
  const errors = refusal.fieldErrors ?? [];
  return validationProblem(
    errors.length > 0 ? errors.map((e) => ({ pointer: `${base}${e.path}`, message: e.message, code: "invalid-data" })) : [{ pointer: whole, message: refusal.message, code: "invalid-data" }],
  );
}
