import type { Transaction } from "kysely";
import { z } from "zod";
import type { Database, HumanTaskRow } from "../../db/schema";
import { ActorSchema, openWorkflow, parseInput, runInTransaction, UUID } from "../executions/actions/action-support";
import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { toHumanTaskItem } from "./human-task-items";
import type { HumanTaskItem } from "./human-task-items";
import { findHumanTask, lockHumanTask, resolveHumanActor } from "./human-task-support";
import type { HumanActor, HumanRefusal } from "./human-task-support";

/**
 * The shape claim, release and reassign share: parse, then in one transaction
 * lock the run (history appends need its row lock, and taking it before the
 * inbox row keeps the order submit and the evaluator use), lock the inbox row,
 * apply the verb, and answer with the item as it is after commit.
 */


export const HumanTaskActionBaseSchema = z.strictObject({
  namespaceId: UUID,
  id: z.string().min(1).max(100),
  actor: ActorSchema,
});

export type HumanTaskActionResult = { ok: true; item: HumanTaskItem } | HumanRefusal;

export async function runHumanTaskAction<S extends z.ZodType<{ namespaceId: string; id: string; actor: z.infer<typeof ActorSchema> }>>(
  deps: WorkflowActionDeps,
  schema: S,
  rawInput: unknown,
  apply: (trx: Transaction<Database>, now: Date, row: HumanTaskRow, who: HumanActor, input: z.infer<S>) => Promise<void>,
): Promise<HumanTaskActionResult> {
  const parsed = parseInput(schema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const result = await runInTransaction(deps, async (trx, now) => {
    const seen = await findHumanTask(trx, input.namespaceId, input.id);
    await openWorkflow(trx, { namespaceId: input.namespaceId, workflowId: seen.workflowId });
    const row = await lockHumanTask(trx, input.namespaceId, input.id);
    const who = await resolveHumanActor(trx, input.namespaceId, input.actor);
    await apply(trx, now, row, who, input);
    return { ok: true as const };
  });
  if (!result.ok) return result;
  const row = await findHumanTask(deps.db, input.namespaceId, input.id);
  return { ok: true, item: await toHumanTaskItem(deps.db, row, new Date(deps.now?.() ?? Date.now())) };
}
