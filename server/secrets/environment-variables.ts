import { sql } from "kysely";
import { z } from "zod";
import type { Db } from "@/db/pool";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { SECRET_NAME_PATTERN } from "./secrets";

/**
 * A namespace's environment variables: plain configuration task input reads
 * as `${workflow.env.NAME}`, resolved when the task is dispatched
 * (dispatch-input.ts) — a base URL, a region, a feature switch. Unlike
 * secrets they are readable by everyone with a role in the namespace, and
 * stored as written. Every change is audited by name (the value is readable
 * where it matters, and may be long).
 */

export const MAX_VARIABLE_BYTES = 64 * 1024;

export const VariableNameSchema = z.string().regex(SECRET_NAME_PATTERN, "must start with a letter or _, then letters, digits or _ (up to 128), as in ${workflow.env.NAME}");
export const VariableValueSchema = z
  .string()
  .refine((v) => Buffer.byteLength(v, "utf8") <= MAX_VARIABLE_BYTES, `must be at most ${MAX_VARIABLE_BYTES} bytes`)
  .refine((v) => !v.includes("\u0000"), "must not contain a NUL character");
export const VariableDescriptionSchema = z.string().trim().max(1000);

export interface EnvironmentVariable {
  name: string;
  value: string;
  description: string | null;
  createdAt: Date;
  createdBy: string | null;
  updatedAt: Date;
  updatedBy: string | null;
}

const COLUMNS = ["name", "value", "description", "createdAt", "createdBy", "updatedAt", "updatedBy"] as const;

/** Creates or replaces a variable (and, when given, its description); `created` says which. One transaction with its audit row. */
export async function putEnvironmentVariable(
  db: Db,
  input: { namespaceId: string; name: string; value: string; description?: string | null; actor: AuditActor; updatedBy: string | null },
): Promise<{ variable: EnvironmentVariable; created: boolean }> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("EnvironmentVariables")
      .values({ namespaceId: input.namespaceId, name: input.name, value: input.value, description: input.description ?? null, createdBy: input.updatedBy, updatedBy: input.updatedBy })
      .onConflict((oc) =>
        oc.columns(["namespaceId", "name"]).doUpdateSet({
          value: input.value,
          // Left as it is when the caller did not say.
          description: input.description === undefined ? sql<string | null>`"EnvironmentVariables"."description"` : input.description,
          updatedBy: input.updatedBy,
          updatedAt: sql`now()`,
        }),
      )
      .returning([...COLUMNS, sql<boolean>`xmax = 0`.as("created")])
      .executeTakeFirstOrThrow();
    const { created, ...variable } = row;
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: created ? "variable.create" : "variable.update",
      resourceType: "variable",
      resourceId: input.name,
      details: { name: input.name },
    });
    return { variable, created };
  });
}

export async function listEnvironmentVariables(db: Db, namespaceId: string): Promise<EnvironmentVariable[]> {
  return db.selectFrom("EnvironmentVariables").select(COLUMNS).where("namespaceId", "=", namespaceId).orderBy("name").limit(10_000).execute();
}

export async function getEnvironmentVariable(db: Db, namespaceId: string, name: string): Promise<EnvironmentVariable | undefined> {
  return db.selectFrom("EnvironmentVariables").select(COLUMNS).where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

export async function deleteEnvironmentVariable(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("EnvironmentVariables").where("namespaceId", "=", input.namespaceId).where("name", "=", input.name).returning("id").executeTakeFirst();
    if (row === undefined) return false;
    await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActorColumns(input.actor), action: "variable.delete", resourceType: "variable", resourceId: input.name, details: { name: input.name } });
    return true;
  });
}

/** The values of the named variables that exist, by name: what a dispatched task's input reads (dispatch-input.ts). */
export async function variableValues(db: Db, namespaceId: string, names: readonly string[]): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const rows = await db.selectFrom("EnvironmentVariables").select(["name", "value"]).where("namespaceId", "=", namespaceId).where("name", "in", [...names]).execute();
  return new Map(rows.map((r) => [r.name, r.value]));
}
