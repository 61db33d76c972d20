import type { EventExecutionRow, EventHandlerRow } from "../store/event-handlers";

/** An event handler as the APIs answer it: Conductor's EventHandler fields, plus when it changed. */
export function toEventHandlerView(row: EventHandlerRow) {
  return {
    name: row.name,
    description: row.description,
    event: row.event,
    condition: row.condition,
    evaluatorType: row.evaluatorType,
    actions: row.actions,
    active: row.active,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toEventExecutionView(row: EventExecutionRow) {
  return { id: row.id, eventId: row.eventId, event: row.event, status: row.status, outcomes: row.outcomes, createdAt: row.createdAt.toISOString() };
}
