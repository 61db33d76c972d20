import { z } from "zod";
import type { AuditActorType } from "../../../db/schema";
import { listAuditEvents, parseAuditCursor } from "../../store/audit-events";
import type { AuditEventPage } from "../../store/audit-events";
import { namespaceProcedure, ownerProcedure, router } from "../init";

/**
 * Settings → Audit: who did what, newest first, one keyset page at a time.
 * A namespace's log needs its `admin` permission (it names every member's
 * changes); the cluster-level log — sign-ins, users, which belong to no
 * namespace — is the owner's alone.
 */

const ACTOR_TYPES = ["user", "serviceAccount", "apiKey", "system"] as const satisfies readonly AuditActorType[];

export const auditPageInput = z.object({
  limit: z.int().min(1).max(200).default(50),
  /** A page's nextCursor; omitted: the newest page. */
  cursor: z
    .string()
    .max(200)
    .refine((cursor) => parseAuditCursor(cursor) !== null, "is not a cursor this list handed out")
    .optional(),
  /** Only actions starting with this ("workflowDefinition." for every definition change). */
  actionPrefix: z.string().trim().max(100).optional(),
  /** Only this actor's events. */
  actor: z.object({ type: z.enum(ACTOR_TYPES), id: z.string().min(1).max(200) }).optional(),
});
export type AuditPageInput = z.input<typeof auditPageInput>;

// No transformer is configured, so a Date would reach the browser as a string
// while its type still said Date. The output schema makes the wire type honest.
const auditEventOutput = z.object({
  id: z.string(),
  at: z.date().transform((d) => d.toISOString()),
  actor: z.object({
    type: z.enum(ACTOR_TYPES),
    id: z.string().nullable(),
    name: z.string().nullable(),
    keyPrefix: z.string().nullable(),
  }),
  action: z.string(),
  resourceType: z.string().nullable(),
  resourceId: z.string().nullable(),
  details: z.unknown(),
  ipAddress: z.string().nullable(),
});

const auditPageOutput = z.object({ items: z.array(auditEventOutput), nextCursor: z.string().nullable() });

function toOutput(page: AuditEventPage): z.input<typeof auditPageOutput> {
  return {
    items: page.items.map((e) => ({
      id: e.id,
      at: e.at,
      actor: { type: e.actorType, id: e.actorId, name: e.actorName, keyPrefix: e.actorKeyPrefix },
      action: e.action,
      resourceType: e.resourceType,
      resourceId: e.resourceId,
      details: e.details,
      ipAddress: e.ipAddress,
    })),
    nextCursor: page.nextCursor,
  };
}

function pageOptions(input: z.output<typeof auditPageInput>) {
  return { limit: input.limit, cursor: input.cursor, actionPrefix: input.actionPrefix, actor: input.actor };
}

export const auditRouter = router({
  list: namespaceProcedure("admin")
    .input(auditPageInput)
    .output(auditPageOutput)
    .query(async ({ ctx, input }) => toOutput(await listAuditEvents(ctx.db, { namespaceId: ctx.namespaceId, ...pageOptions(input) }))),

  /** Events of no namespace: sign-ins (failed ones too), owner setup, users created or disabled. */
  listInstance: ownerProcedure
    .input(auditPageInput)
    .output(auditPageOutput)
    .query(async ({ ctx, input }) => toOutput(await listAuditEvents(ctx.db, { namespaceId: null, ...pageOptions(input) }))),
});
