import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "@/db/schema";
import { MAX_NAME_LENGTH, compile, validateDefinition } from "@/engine";
import type { CompileOptions } from "@/engine";
import { insertInlineWorkflowDefinition } from "../store/workflow-definitions";

/** What {@link ensureInlineDefinition} gives: the name and version to start, or why the definition cannot run. */
export type InlineDefinitionResult = { ok: true; name: string; version: 1 } | { ok: false; message: string };

/** The suffix that marks an inline definition's stored name; `:` is never in a registered name (NameSchema). */
const INLINE_MARK = ":inline-";

/** Whether a stored definition name is an inline definition's (see {@link ensureInlineDefinition}). */
export function isInlineDefinitionName(name: string): boolean {
  return name.includes(INLINE_MARK);
}

/**
 * Makes an inline workflow definition startable, as Conductor runs a
 * SUB_WORKFLOW's `workflowDefinition` or a start request's `workflowDef`
 * without registering them. An execution names its definition by (name,
 * version) and the decider reads the blueprint from there, so the definition
 * is stored — validated and compiled as a registration would — under
 * `<its name>:inline-<sha-256 of its JSON, 16 hex>` at version 1, archived, so
 * it never shows in lists or pickers and can never meet a registered name
 * (those have no `:`). The hash covers the compiled blueprint too, so the
 * task policies `options` layer in (Conductor's registered TaskDefs) are part
 * of its identity: the same definition under the same policies is the same
 * row, however many runs start it.
 */
export async function ensureInlineDefinition(
  db: Kysely<Database>,
  namespaceId: string,
  definition: unknown,
  options: CompileOptions = {},
): Promise<InlineDefinitionResult> {
  const verdict = validateDefinition(definition);
  if (!verdict.ok) {
    const first = verdict.problems[0]!;
    return { ok: false, message: `the inline workflow definition is not valid: ${first.message}${verdict.problems.length > 1 ? ` (and ${verdict.problems.length - 1} more)` : ""}` };
  }
  const blueprint = compile(verdict.definition, options);
  const hash = createHash("sha256").update(JSON.stringify([verdict.definition, blueprint])).digest("hex").slice(0, 16);
  const suffix = `${INLINE_MARK}${hash}`;
  const name = `${verdict.definition.name.slice(0, MAX_NAME_LENGTH - suffix.length).trimEnd()}${suffix}`;
  // The stored name and version appear in the blueprint only as its own name and version: no second compile.
  const stored = { namespaceId, name, description: verdict.definition.description ?? null, graph: { ...verdict.definition, name, version: 1 }, blueprint: { ...blueprint, name, version: 1 } };
  await insertInlineWorkflowDefinition(db, stored);
  return { ok: true, name, version: 1 };
}
