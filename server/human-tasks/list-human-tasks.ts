import { sql } from "kysely";
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import { z } from "zod";
import type { Database } from "../../db/schema";
import { NAMESPACE_ROLES } from "../auth/principal";
import { ActorSchema, parseInput, UUID } from "../executions/actions/action-support";
import type { WorkflowActionDeps } from "../executions/actions/action-support";
import { toHumanTaskItems } from "./human-task-items";
import type { HumanTaskItem } from "./human-task-items";
import { OPEN_STATUSES, isOperator, resolveHumanActor, roleRank } from "./human-task-support";
import type { HumanActor, HumanRefusal } from "./human-task-support";

/**
 * The inbox: a namespace's human tasks as one person sees them.
 * - mine: claimed by me, or assigned to me by name;
 * - groups: assigned to a group I am in, or to a role I hold;
 * - unclaimed: PENDING and something I may claim (anyone, me, my groups, my role);
 * - all: everything I may act on or acted on; an operator (who may reassign)
 *   sees every task of the namespace.
 * A group or role task is visible only to its members (and operators under
 * "all"). Open tasks come by due date (none last), then age; closed ones
 * newest first. Keyset-paged: the cursor is the last item's id, compared at
 * full precision in SQL (never OFFSET, never a millisecond Date).
 */

export const HUMAN_TASK_VIEWS = ["mine", "groups", "unclaimed", "all"] as const;
export type HumanTaskView = (typeof HUMAN_TASK_VIEWS)[number];


export const ListHumanTasksInputSchema = z.strictObject({
  namespaceId: UUID,
  actor: ActorSchema,
  view: z.enum(HUMAN_TASK_VIEWS).default("all"),
  state: z.enum(["open", "closed"]).default("open"),
  cursor: UUID.optional(),
  limit: z.int().min(1).max(200).default(50),
});

type Eb = ExpressionBuilder<Database, "HumanTasks">;

const NO_DUE = sql<Date>`'9999-12-31T00:00:00Z'::timestamptz`;

/** Tasks `who` is eligible for as an assignee (the SQL of eligibilityProblem). */
export function eligibleFor(eb: Eb, who: HumanActor): Expression<SqlBool> {
  if (who.kind === "system") return eb.lit(true);
  if (who.kind === "service" || who.role === null) return who.kind === "service" ? eb("HumanTasks.assigneeKind", "=", "anyone") : eb.lit(false);
  const roles = NAMESPACE_ROLES.filter((r) => roleRank(r) <= roleRank(who.role));
  const ors: Expression<SqlBool>[] = [
    eb("HumanTasks.assigneeKind", "=", "anyone"),
    eb.and([eb("HumanTasks.assigneeKind", "=", "user"), eb("HumanTasks.assigneeUserId", "=", who.userId)]),
    eb.and([eb("HumanTasks.assigneeKind", "=", "role"), eb("HumanTasks.assigneeRole", "in", roles)]),
  ];
  if (who.groupIds.length > 0) ors.push(eb.and([eb("HumanTasks.assigneeKind", "=", "group"), eb("HumanTasks.assigneeGroupId", "in", who.groupIds)]));
  return eb.or(ors);
}

/** The rows of `view` for `who` (status aside). */
export function inView(eb: Eb, who: HumanActor, view: HumanTaskView): Expression<SqlBool> {
  const me = who.kind === "user" ? who.userId : null;
  switch (view) {
    case "mine":
      if (me === null) return eb.lit(false);
      return eb.or([eb("HumanTasks.claimedByUserId", "=", me), eb.and([eb("HumanTasks.assigneeKind", "=", "user"), eb("HumanTasks.assigneeUserId", "=", me)])]);
    case "groups":
      if (who.kind !== "user") return eb.lit(false);
      return eb.and([eb("HumanTasks.assigneeKind", "in", ["group", "role"]), eligibleFor(eb, who)]);
    case "unclaimed":
      return eb.and([eb("HumanTasks.status", "=", "PENDING"), eligibleFor(eb, who)]);
    case "all": {
      if (isOperator(who)) return eb.lit(true);
      if (me === null) return eligibleFor(eb, who);
      return eb.or([
        eligibleFor(eb, who),
        eb("HumanTasks.claimedByUserId", "=", me),
        eb("HumanTasks.completedByUserId", "=", me),
        eb.exists(eb.selectFrom("HumanTaskSubmissions as s").select("s.id").whereRef("s.humanTaskId", "=", "HumanTasks.id").where("s.userId", "=", me)),
      ]);
    }
  }
}

export type ListHumanTasksResult = { ok: true; items: HumanTaskItem[]; nextCursor: string | null } | HumanRefusal;

export async function listHumanTasks(deps: WorkflowActionDeps, rawInput: unknown): Promise<ListHumanTasksResult> {
  const parsed = parseInput(ListHumanTasksInputSchema, rawInput);
  if (!parsed.ok) return parsed;
  const input = parsed.value;
  const db: Kysely<Database> = deps.db;
  const who = await resolveHumanActor(db, input.namespaceId, input.actor);
  const open = input.state === "open";
  let query = db
    .selectFrom("HumanTasks")
    .selectAll()
    .where("HumanTasks.namespaceId", "=", input.namespaceId)
    .where("HumanTasks.status", open ? "in" : "not in", [...OPEN_STATUSES])
    .where((eb) => inView(eb, who, input.view));
  if (input.cursor !== undefined) {
    const cursor = input.cursor;
    query = open
      ? query.where((eb) =>
          eb(
            eb.refTuple(sql`coalesce(${eb.ref("HumanTasks.dueAt")}, ${NO_DUE})`, "HumanTasks.createdAt", "HumanTasks.id"),
            ">",
            eb
              .selectFrom("HumanTasks as c").select([sql<Date>`coalesce(${sql.ref("c.dueAt")}, ${NO_DUE})`.as("d"), "c.createdAt", "c.id"]).where("c.id", "=", cursor).$asTuple("d", "createdAt", "id"),
          ),
        )
      : query.where((eb) =>
          eb(eb.refTuple("HumanTasks.updatedAt", "HumanTasks.id"), "<", eb.selectFrom("HumanTasks as c").select(["c.updatedAt", "c.id"]).where("c.id", "=", cursor).$asTuple("updatedAt", "id")),
        );
  }
  query = open
    ? query.orderBy(sql`coalesce("HumanTasks"."dueAt", ${NO_DUE})`).orderBy("HumanTasks.createdAt").orderBy("HumanTasks.id")
    : query.orderBy("HumanTasks.updatedAt", "desc").orderBy("HumanTasks.id", "desc");
  const rows = await query.limit(input.limit + 1).execute();
  const page = rows.slice(0, input.limit);
  const items = await toHumanTaskItems(db, page, new Date(deps.now?.() ?? Date.now()));
  return { ok: true, items, nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null };
}
