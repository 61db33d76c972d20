import { referencedRefs, resolveTemplateIn } from "../../engine";

/**
 * A call to a webhook as the run it starts: the input mapping, the
 * correlation id and the idempotency key are templates over the call's
 * `{ body, headers, query }` (header names in lower case), resolved by the
 * same rules as a task's input — `${body.order.id}`, `${headers['x-github-delivery']}`,
 * `${query.ref}`. The console previews exactly what the receiver does.
 */

export interface CallDocument {
  body: unknown;
  headers: Record<string, string>;
  query: Record<string, string>;
}

export interface MappingTemplates {
  inputMapping: unknown;
  correlationIdTemplate?: string | null;
  idempotencyKeyTemplate?: string | null;
}

export interface MappedCall {
  input: unknown;
  correlationId: string | null;
  idempotencyKey: string | null;
}

/** Longest correlation id or idempotency key a template may give; longer is cut. */
const MAX_KEY_LENGTH = 255;

export function mapWebhookCall(templates: MappingTemplates, call: CallDocument): MappedCall {
  const roots = { body: call.body, headers: call.headers, query: call.query };
  const input = resolveTemplateIn(templates.inputMapping, roots);
  return {
    input: input ?? {},
    correlationId: templateText(templates.correlationIdTemplate ?? null, roots),
    idempotencyKey: templateText(templates.idempotencyKeyTemplate ?? null, roots),
  };
}

/** The mapping of a sample call, and what is wrong with the templates: for the console's preview. */
export function previewWebhookCall(input: MappingTemplates & { call: { body?: unknown; headers: Record<string, string>; query: Record<string, string> } }): MappedCall & { problems: string[] } {
  const headers = Object.fromEntries(Object.entries(input.call.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const problems = [input.inputMapping, input.correlationIdTemplate, input.idempotencyKeyTemplate]
    .filter((t) => t != null)
    .flatMap((t) => referencedRefs(t).problems.map((p) => p.message));
  return { ...mapWebhookCall(input, { body: input.call.body ?? null, headers, query: input.call.query }), problems };
}

/** A template that must give one line of text; null when it gives nothing. */
function templateText(template: string | null, roots: Record<string, unknown>): string | null {
  if (template === null) return null;
  const value = resolveTemplateIn(template, roots);
  if (value === null || value === undefined || value === "") return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.slice(0, MAX_KEY_LENGTH);
}
