import type { Db } from "@/db/pool";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { deleteEventHandler, upsertEventHandler } from "../store/event-handlers";
import type { EventHandlerRow } from "../store/event-handlers";
import { getWorkflowDefinition } from "../store/workflow-definitions";
import { literalWorkflowName } from "./event-handler-schema";
import type { EventHandlerConfig } from "./event-handler-schema";

/**
 * Saving and deleting event handlers, as REST, Conductor's /api/event and the
 * console do it. A start_workflow action naming a workflow literally (not by
 * a placeholder) must name one that exists — the rest can only be known when
 * an event arrives. A save and its AuditEvents row commit together.
 */

export interface EventHandlerProblem {
  path: (string | number)[];
  message: string;
}

export type SaveEventHandlerResult = { ok: true; row: EventHandlerRow; created: boolean } | { ok: false; problems: EventHandlerProblem[] };

export async function saveEventHandler(
  db: Db,
  input: { namespaceId: string; config: EventHandlerConfig; actor: AuditActor; updatedBy: string | null; mustExist?: boolean; mustBeNew?: boolean },
): Promise<SaveEventHandlerResult | { ok: false; reason: "not-found" | "exists"; message: string }> {
  const problems: EventHandlerProblem[] = [];
  for (const [index, action] of input.config.actions.entries()) {
    if (action.action !== "start_workflow") continue;
    const name = literalWorkflowName(action.start_workflow.name);
    if (name === null) continue;
    const version = action.start_workflow.version ?? undefined;
    if ((await getWorkflowDefinition(db, input.namespaceId, name, version)) === undefined) {
      problems.push({ path: ["actions", index, "start_workflow", "name"], message: `There is no workflow "${name}"${version === undefined ? "" : ` version ${version}`} in this namespace` });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("EventHandlers").select("id").where("namespaceId", "=", input.namespaceId).where("name", "=", input.config.name).forUpdate().executeTakeFirst();
    if (input.mustExist === true && existing === undefined) return { ok: false as const, reason: "not-found" as const, message: `No event handler named ${input.config.name}` };
    if (input.mustBeNew === true && existing !== undefined) return { ok: false as const, reason: "exists" as const, message: `An event handler named ${input.config.name} already exists` };
    const saved = await upsertEventHandler(trx, { namespaceId: input.namespaceId, name: input.config.name, settings: input.config, actor: input.updatedBy });
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: saved.created ? "eventHandler.create" : "eventHandler.update",
      resourceType: "eventHandler",
      resourceId: input.config.name,
      details: { name: input.config.name, event: input.config.event, active: input.config.active, actions: input.config.actions.map((a) => a.action) },
    });
    return { ok: true as const, ...saved };
  });
}

export async function removeEventHandler(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<EventHandlerRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await deleteEventHandler(trx, input.namespaceId, input.name);
    if (row !== undefined) {
      await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActorColumns(input.actor), action: "eventHandler.delete", resourceType: "eventHandler", resourceId: input.name, details: { name: input.name } });
    }
    return row;
  });
}
