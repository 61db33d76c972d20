import { sql } from "kysely";
import type { Kysely, Selectable } from "kysely";
import { json } from "../../db/json";
import type { Database, EventExecutionStatus } from "../../db/schema";

/** EventHandlers per (namespace, name), and EventExecutions: what each did with each event (server/events). */

type Executor = Kysely<Database>;
export type EventHandlerRow = Selectable<Database["EventHandlers"]>;
export type EventExecutionRow = Selectable<Database["EventExecutions"]>;

export interface EventHandlerSettings {
  description?: string | null;
  event: string;
  condition?: string | null;
  evaluatorType: string;
  actions: unknown;
  active: boolean;
}

export async function upsertEventHandler(
  db: Executor,
  input: { namespaceId: string; name: string; settings: EventHandlerSettings; actor: string | null },
): Promise<{ row: EventHandlerRow; created: boolean }> {
  const values = {
    description: input.settings.description ?? null,
    event: input.settings.event,
    condition: input.settings.condition ?? null,
    evaluatorType: input.settings.evaluatorType,
    actions: json(input.settings.actions),
    active: input.settings.active,
  };
  const row = await db
    .insertInto("EventHandlers")
    .values({ namespaceId: input.namespaceId, name: input.name, ...values, createdBy: input.actor, updatedBy: input.actor })
    .onConflict((oc) => oc.columns(["namespaceId", "name"]).doUpdateSet({ ...values, updatedBy: input.actor, updatedAt: sql`now()` }))
    .returningAll()
    .returning(sql<boolean>`xmax = 0`.as("created"))
    .executeTakeFirstOrThrow();
  const { created, ...stored } = row;
  return { row: stored, created };
}

export async function getEventHandler(db: Executor, namespaceId: string, name: string): Promise<EventHandlerRow | undefined> {
  return db.selectFrom("EventHandlers").selectAll().where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

export async function listEventHandlers(db: Executor, input: { namespaceId: string; event?: string; activeOnly?: boolean }): Promise<EventHandlerRow[]> {
  let query = db.selectFrom("EventHandlers").selectAll().where("namespaceId", "=", input.namespaceId);
  if (input.event !== undefined) query = query.where("event", "=", input.event);
  if (input.activeOnly === true) query = query.where("active", "=", true);
  return query.orderBy("name").limit(1000).execute();
}

export async function deleteEventHandler(db: Executor, namespaceId: string, name: string): Promise<EventHandlerRow | undefined> {
  return db.deleteFrom("EventHandlers").where("namespaceId", "=", namespaceId).where("name", "=", name).returningAll().executeTakeFirst();
}

/** The handlers of an event, in one namespace, that are still to run for event `eventId`. */
export async function handlersDueForEvent(db: Executor, input: { namespaceId: string; event: string; eventId: number }): Promise<EventHandlerRow[]> {
  return db
    .selectFrom("EventHandlers as h")
    .selectAll("h")
    .where("h.namespaceId", "=", input.namespaceId)
    .where("h.event", "=", input.event)
    .where("h.active", "=", true)
    .where((eb) => eb.not(eb.exists(eb.selectFrom("EventExecutions as x").select("x.id").whereRef("x.handlerId", "=", "h.id").where("x.eventId", "=", input.eventId))))
    .orderBy("h.name")
    .execute();
}

/** Records what a handler did with an event; false when it was already recorded (another relay got there first). */
export async function recordEventExecution(
  db: Executor,
  input: { namespaceId: string; handlerId: string; eventId: number; event: string; status: EventExecutionStatus; outcomes: unknown },
): Promise<boolean> {
  const row = await db
    .insertInto("EventExecutions")
    .values({ ...input, outcomes: json(input.outcomes) })
    .onConflict((oc) => oc.columns(["handlerId", "eventId"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}

export async function listEventExecutions(db: Executor, input: { namespaceId: string; handlerId: string; limit: number }): Promise<EventExecutionRow[]> {
  return db
    .selectFrom("EventExecutions")
    .selectAll()
    .where("namespaceId", "=", input.namespaceId)
    .where("handlerId", "=", input.handlerId)
    .orderBy("createdAt", "desc")
    .orderBy("id", "desc")
    .limit(input.limit)
    .execute();
}
