/**
 * `${workflow.secrets.NAME}` and `${workflow.env.NAME}`: references to a
 * namespace's secrets and environment variables, which the engine never
 * sees the values of. They are resolved when a task is dispatched — in the
 * process that sends it (server/secrets/dispatch-input.ts) — from the
 * definition's own template strings, never from stored data, so a task
 * output that happens to hold the text `${workflow.secrets.X}` cannot make
 * the dispatcher splice a secret into anything.
 *
 * When a task is scheduled, resolveTemplate writes a reference as its
 * placeholder: `***` for a secret, the reference's own text for a variable.
 * That is what the stored input, the history and the live view show.
 *
 * A string that reads a reference is resolved again at dispatch, so it may
 * combine it only with what is the same at dispatch as when it was scheduled:
 * literal text, other references, the run's input and ids
 * ({@link DISPATCH_READABLE_WORKFLOW_FIELDS}) and `${CPEWF_TASK_ID}`.
 */
import { TASK_ID_SYSTEM_PARAMETER } from "./expression-context";
import type { JsonPath } from "./json-path-parser";
import { parseJsonPath } from "./json-path-parser";
import { referencedRefs } from "./referenced-refs";
import { parseTemplate } from "./template-parser";
import type { TemplateExpression } from "./template-parser";

/** `secrets` for `${workflow.secrets.NAME}`, `env` for `${workflow.env.NAME}`. */
export type DispatchKind = "secrets" | "env";

export interface DispatchReference {
  kind: DispatchKind;
  name: string;
}

/** What a resolved secret reads wherever it would be shown or stored. */
export const SECRET_MASK = "***";

/** Names of secrets and variables: plain identifiers, so `${workflow.secrets.NAME}` parses as one path. */
export const DISPATCH_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** The fields of `workflow` a string holding a reference may also read: they cannot change between scheduling and dispatch. */
export const DISPATCH_READABLE_WORKFLOW_FIELDS: ReadonlySet<string> = new Set(["input", "workflowId", "workflowType", "version", "correlationId", "parentWorkflowId", "startTime"]);

export type DispatchPathClass =
  | { kind: "reference"; reference: DispatchReference }
  /** Touches `workflow.secrets`/`workflow.env` but is not one plain reference (the whole object, a field of a value, a union, a bad name). */
  | { kind: "misuse"; field: DispatchKind }
  | { kind: "other" };

/** Whether a parsed path is exactly `workflow.secrets.NAME` / `workflow.env.NAME` (dots or brackets). */
export function classifyDispatchPath(path: JsonPath): DispatchPathClass {
  const [first, second, third, ...rest] = path.segments;
  if (path.root !== "$" || first?.kind !== "property" || !first.names.includes("workflow") || second?.kind !== "property") return { kind: "other" };
  const field = second.names.find((n): n is DispatchKind => n === "secrets" || n === "env");
  if (field === undefined) return { kind: "other" };
  const name = third?.kind === "property" && third.names.length === 1 ? third.names[0] : undefined;
  if (first.names.length !== 1 || second.names.length !== 1 || name === undefined || rest.length > 0 || !DISPATCH_NAME_PATTERN.test(name)) return { kind: "misuse", field };
  return { kind: "reference", reference: { kind: field, name } };
}

/** What a reference resolves to when the task is scheduled (and wherever it is not dispatched). */
export function dispatchPlaceholder(reference: DispatchReference): string {
  return reference.kind === "secrets" ? SECRET_MASK : "${workflow.env." + reference.name + "}";
}

/** The reference's own text, for messages. */
export function dispatchReferenceText(reference: DispatchReference): string {
  return "${workflow." + reference.kind + "." + reference.name + "}";
}

export interface DispatchStringAnalysis {
  /** The references written directly in the string, in order (repeats kept). */
  references: DispatchReference[];
  /** Why the string cannot be resolved at dispatch as written; empty when it can (or reads no reference). */
  problems: string[];
}

const MENTIONS_DISPATCH_FIELD = /^\s*workflow\s*(?:\.\s*|\[\s*['"]\s*)(secrets|env)\b/;

/**
 * The references a template string reads and what is wrong with how it reads
 * them. Never throws; strings without `${` are answered at once.
 */
export function analyzeDispatchString(text: string): DispatchStringAnalysis {
  const out: DispatchStringAnalysis = { references: [], problems: [] };
  if (!text.includes("${")) return out;
  const parsed = parseTemplate(text);
  const topLevel = parsed.parts.filter((p): p is TemplateExpression => p.kind === "expression");
  const others: TemplateExpression[] = [];
  const pending = [...topLevel];
  while (pending.length > 0) {
    const expr = pending.pop()!;
    if (expr.tooDeep) continue;
    const nested = expr.parts.filter((p): p is TemplateExpression => p.kind === "expression");
    if (nested.length > 0) {
      pending.push(...nested);
      const field = MENTIONS_DISPATCH_FIELD.exec(expr.body)?.[1];
      if (field !== undefined) out.problems.push(`the name of a ${field === "secrets" ? "secret" : "variable"} must be written out, as in \${workflow.${field}.NAME}: it cannot be computed`);
      else if (expr.depth === 0) others.push(expr);
      continue;
    }
    const body = expr.body;
    if (body === TASK_ID_SYSTEM_PARAMETER || body.trim() === "") continue;
    const compiled = parseJsonPath(body.trim());
    if (!compiled.ok) {
      if (expr.depth === 0) others.push(expr);
      continue;
    }
    const found = classifyDispatchPath(compiled.path);
    if (found.kind === "misuse") {
      out.problems.push(`\${${body.trim().slice(0, 80)}} must name one ${found.field === "secrets" ? "secret" : "variable"} by a plain name (letters, digits, _), as in \${workflow.${found.field}.NAME}`);
    } else if (found.kind === "reference") {
      if (expr.depth > 0) out.problems.push(`${dispatchReferenceText(found.reference)} cannot be used inside another expression`);
      else out.references.push(found.reference);
    } else if (expr.depth === 0) {
      others.push(expr);
    }
  }
  out.references.reverse();
  if (out.references.length > 0) {
    for (const expr of others) {
      const exprText = text.slice(expr.start, expr.end);
      const reads = referencedRefs(exprText);
      const readable = reads.refs.size === 0 && [...reads.workflowFields].every((f) => DISPATCH_READABLE_WORKFLOW_FIELDS.has(f));
      if (!readable) {
        out.problems.push(
          `a string that uses a secret or variable is resolved again when the task is sent, so besides text it may read only the run's input and ids: put ${exprText.slice(0, 80)} in a field of its own`,
        );
      }
    }
  }
  return out;
}
