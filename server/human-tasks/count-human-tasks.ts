import { z } from "zod";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema";
import { ActorSchema, parseInput, UUID } from "../executions/actions/action-support";
import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { OPEN_STATUSES, resolveHumanActor } from "./human-task-support";
import type { HumanRefusal } from "./human-task-support";
import { eligibleFor, inView } from "./list-human-tasks";


export const CountHumanTasksInputSchema = z.strictObject({ namespaceId: UUID, actor: ActorSchema });

export type HumanTaskCounts = { mine: number; groups: number; unclaimed: number; overdue: number };

/**
 * The navigation's badge counts: open tasks the caller can act on, per inbox
 * view, and how many of those (mine or eligible) are past their due time. One
 * statement over the open partial index.
 */
export async function countHumanTasks(deps: WorkflowActionDeps, rawInput: unknown): Promise<({ ok: true } & HumanTaskCounts) | HumanRefusal> {
  const parsed = parseInput(CountHumanTasksInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const { namespaceId, actor } = parsed.value;
  const db: Kysely<Database> = deps.db;
  const who = await resolveHumanActor(db, namespaceId, actor);
  const now = new Date(deps.now?.() ?? Date.now());
  const row = await db
    .selectFrom("HumanTasks")
    .where("namespaceId", "=", namespaceId)
    .where("status", "in", [...OPEN_STATUSES])
    .select((eb) => [
      eb.fn.countAll<string>().filterWhere(inView(eb, who, "mine")).as("mine"),
      eb.fn.countAll<string>().filterWhere(inView(eb, who, "groups")).as("groups"),
      eb.fn.countAll<string>().filterWhere(inView(eb, who, "unclaimed")).as("unclaimed"),
      eb.fn
        .countAll<string>()
        .filterWhere(eb.and([eb("dueAt", "<", now), eb.or([inView(eb, who, "mine"), eb.and([eb("status", "=", "PENDING"), eligibleFor(eb, who)])])]))
        .as("overdue"),
    ])
    .executeTakeFirstOrThrow();
  return { ok: true, mine: Number(row.mine), groups: Number(row.groups), unclaimed: Number(row.unclaimed), overdue: Number(row.overdue) };
}
