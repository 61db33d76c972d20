import { sql } from "kysely";
import { z } from "zod";
import type { Db } from "@/db/pool";
import type { SecretLookup } from "../lib/secret-lookup";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { openSecretValue, SealingKeys, sealSecretValue } from "./sealing";

/**
 * A namespace's secrets: write-only values, sealed at rest (sealing.ts).
 * Their names are readable (editors pick them; `${workflow.secrets.NAME}`
 * names them); their values leave the server only inside a dispatched call
 * — a webhook's signature check, a listener's signature — never through an
 * API. Every change is audited by name, never with the value.
 */

export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const MAX_SECRET_BYTES = 64 * 1024;

export const SecretNameSchema = z.string().regex(SECRET_NAME_PATTERN, "must start with a letter or _, then letters, digits or _ (up to 128), as in ${workflow.secrets.NAME}");
export const SecretValueSchema = z
  .string()
  .min(1, "must not be empty")
  .refine((v) => Buffer.byteLength(v, "utf8") <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes`)
  .refine((v) => !v.includes("\u0000"), "must not contain a NUL character");

export interface SecretMetadata {
  name: string;
  description: string | null;
  createdAt: Date;
  createdBy: string | null;
  updatedAt: Date;
  updatedBy: string | null;
}

const METADATA = ["name", "description", "createdAt", "createdBy", "updatedAt", "updatedBy"] as const;

/** Creates or replaces a secret's value (and description); `created` says which. */
export async function putSecret(
  db: Db,
  keys: SealingKeys,
  input: { namespaceId: string; name: string; value: string; description?: string | null; actor: AuditActor; updatedBy: string | null },
): Promise<{ secret: SecretMetadata; created: boolean }> {
  const sealedValue = sealSecretValue(keys, { namespaceId: input.namespaceId, name: input.name }, input.value);
  return db.transaction().execute(async (trx) => {
    const description = input.description === undefined ? sql<string | null>`"Secrets"."description"` : sql<string | null>`${input.description}`;
    const row = await trx
      .insertInto("Secrets")
      .values({ namespaceId: input.namespaceId, name: input.name, sealedValue, description: input.description ?? null, createdBy: input.updatedBy, updatedBy: input.updatedBy })
      .onConflict((oc) => oc.columns(["namespaceId", "name"]).doUpdateSet({ sealedValue, description, updatedBy: input.updatedBy, updatedAt: sql`now()` }))
      .returning([...METADATA, sql<boolean>`xmax = 0`.as("created")])
      .executeTakeFirstOrThrow();
    const { created, ...secret } = row;
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: created ? "secret.create" : "secret.update",
      resourceType: "secret",
      resourceId: input.name,
      details: { name: input.name },
    });
    return { secret, created };
  });
}

export async function listSecrets(db: Db, namespaceId: string): Promise<SecretMetadata[]> {
  return db.selectFrom("Secrets").select(METADATA).where("namespaceId", "=", namespaceId).orderBy("name").limit(10_000).execute();
}

export async function getSecretMetadata(db: Db, namespaceId: string, name: string): Promise<SecretMetadata | undefined> {
  return db.selectFrom("Secrets").select(METADATA).where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
}

export async function deleteSecret(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("Secrets").where("namespaceId", "=", input.namespaceId).where("name", "=", input.name).returning("id").executeTakeFirst();
    if (row === undefined) return false;
    await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActorColumns(input.actor), action: "secret.delete", resourceType: "secret", resourceId: input.name, details: { name: input.name } });
    return true;
  });
}

/** Reads values for the parts that use them (never an API answer): null when the secret does not exist. */
export function secretLookup(db: Db, keys: SealingKeys): SecretLookup {
  return async (namespaceId, name) => {
    const row = await db.selectFrom("Secrets").select("sealedValue").where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
    return row === undefined ? null : openSecretValue(keys, { namespaceId, name }, row.sealedValue);
  };
}

const keysBySecret = new Map<string, SealingKeys>();

/** The sealing keys of a configuration, derived once per instance secret. */
export function sealingKeysOf(config: { secret: string; previousSecrets: readonly string[] }): SealingKeys {
  const cacheKey = [config.secret, ...config.previousSecrets].join("\u0000");
  let keys = keysBySecret.get(cacheKey);
  if (keys === undefined) {
    keys = new SealingKeys(config.secret, config.previousSecrets);
    keysBySecret.set(cacheKey, keys);
  }
  return keys;
}
