import { sql } from "kysely";
import { z } from "zod";
import type { Db } from "@/db/pool";
import type { AiProviderRow } from "@/db/schema";
import { getSecretMetadata, SecretNameSchema } from "../secrets/secrets";
import { appendAuditEvent, auditActorColumns } from "../store/audit-events";
import type { AuditActor } from "../store/audit-events";
import { HttpRequestError, parseHttpUrl } from "../system-tasks/guarded-http";

/**
 * A namespace's AI providers: the integrations an AI task names as
 * `llmProvider` (or `embeddingModelProvider`), Conductor's field names. Two
 * kinds: `openai` — any server speaking OpenAI's API, which is also how a
 * local Ollama, vLLM or LM Studio is reached, by its base URL — and
 * `anthropic` (the Messages API). The key is a namespace secret named by
 * `apiKeySecret`, opened only in the process that calls the provider; a task
 * may name only a model listed here.
 */

export const AI_PROVIDER_KINDS = ["openai", "anthropic"] as const;
export type AiProviderKind = (typeof AI_PROVIDER_KINDS)[number];

export const AI_PROVIDER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const AiProviderNameSchema = z.string().regex(AI_PROVIDER_NAME_PATTERN, "must start with a letter or digit, then letters, digits, _ . or - (up to 64)");

/** Where each kind is served when no base URL is given. */
export const DEFAULT_BASE_URLS: Readonly<Record<AiProviderKind, string>> = { openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com" };

const ModelNameSchema = z.string().trim().min(1, "must not be empty").max(200).refine((m) => ![...m].some((c) => c.charCodeAt(0) < 0x20), "must not contain control characters");

export const AiProviderConfigSchema = z.strictObject({
  kind: z.enum(AI_PROVIDER_KINDS).meta({ description: "openai: OpenAI's API and every server compatible with it (Ollama, vLLM, LM Studio, gateways); anthropic: the Messages API." }),
  baseUrl: z.string().trim().max(2000).optional().meta({ description: "The API's base URL, e.g. http://localhost:11434/v1 for Ollama; the kind's public API when absent." }),
  apiKeySecret: SecretNameSchema.nullable().optional().meta({ description: "The namespace secret holding the API key; none for a server that needs no key." }),
  models: z
    .array(ModelNameSchema)
    .min(1, "list at least one model")
    .max(200)
    .refine((m) => new Set(m).size === m.length, "lists a model twice")
    .meta({ description: "The models a task may name." }),
  allowPrivateNetwork: z.boolean().default(false).meta({ description: "Let tasks reach this provider on a loopback or private address (a local Ollama) without NODE_FLOW_HTTP_ALLOW_PRIVATE." }),
  description: z.string().trim().max(1000).nullable().optional(),
});
export type AiProviderConfig = z.output<typeof AiProviderConfigSchema>;

/** What every API shows of a provider: everything, as nothing here is secret (the key is a secret's name). */
export interface AiProvider {
  name: string;
  kind: AiProviderKind;
  baseUrl: string;
  apiKeySecret: string | null;
  models: string[];
  allowPrivateNetwork: boolean;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string | null;
}

const COLUMNS = ["name", "kind", "baseUrl", "apiKeySecret", "models", "allowPrivateNetwork", "description", "createdAt", "updatedAt", "updatedBy"] as const;

function toProvider(row: Pick<AiProviderRow, (typeof COLUMNS)[number]>): AiProvider {
  return { ...row };
}

export type SaveAiProviderResult = { ok: true; provider: AiProvider; created: boolean } | { ok: false; problems: { path: string[]; message: string }[] };

/** Creates or replaces a provider; refuses, naming the field, a base URL that is not http(s) or a key secret that does not exist. */
export async function saveAiProvider(
  db: Db,
  input: { namespaceId: string; name: string; config: AiProviderConfig; actor: AuditActor; updatedBy: string | null },
): Promise<SaveAiProviderResult> {
  const { config } = input;
  const problems: { path: string[]; message: string }[] = [];
  const baseUrl = (config.baseUrl === undefined || config.baseUrl === "" ? DEFAULT_BASE_URLS[config.kind] : config.baseUrl).replace(/\/+$/, "");
  try {
    const url = parseHttpUrl(baseUrl);
    if (url.username !== "" || url.password !== "") problems.push({ path: ["baseUrl"], message: "must not hold credentials: put the key in a secret and name it in apiKeySecret" });
    if (url.search !== "" || url.hash !== "") problems.push({ path: ["baseUrl"], message: "must not have a query or fragment" });
  } catch (error) {
    if (!(error instanceof HttpRequestError)) throw error;
    problems.push({ path: ["baseUrl"], message: error.message });
  }
  const apiKeySecret = config.apiKeySecret ?? null;
  if (apiKeySecret !== null && (await getSecretMetadata(db, input.namespaceId, apiKeySecret)) === undefined) {
    problems.push({ path: ["apiKeySecret"], message: `There is no secret "${apiKeySecret}" in this namespace; create it under Settings → Secrets first` });
  }
  if (problems.length > 0) return { ok: false, problems };
  const values = {
    kind: config.kind,
    baseUrl,
    apiKeySecret,
    models: config.models,
    allowPrivateNetwork: config.allowPrivateNetwork,
    description: config.description ?? null,
    updatedBy: input.updatedBy,
  };
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("AiProviders")
      .values({ namespaceId: input.namespaceId, name: input.name, ...values, createdBy: input.updatedBy })
      .onConflict((oc) => oc.columns(["namespaceId", "name"]).doUpdateSet({ ...values, updatedAt: sql`now()` }))
      .returning([...COLUMNS, sql<boolean>`xmax = 0`.as("created")])
      .executeTakeFirstOrThrow();
    const { created, ...rest } = row;
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActorColumns(input.actor),
      action: created ? "aiProvider.create" : "aiProvider.update",
      resourceType: "aiProvider",
      resourceId: input.name,
      details: { name: input.name, kind: config.kind, baseUrl, apiKeySecret, models: config.models },
    });
    return { ok: true as const, provider: toProvider(rest), created };
  });
}

export async function listAiProviders(db: Db, namespaceId: string): Promise<AiProvider[]> {
  return (await db.selectFrom("AiProviders").select(COLUMNS).where("namespaceId", "=", namespaceId).orderBy("name").limit(1000).execute()).map(toProvider);
}

export async function getAiProvider(db: Db, namespaceId: string, name: string): Promise<AiProvider | undefined> {
  const row = await db.selectFrom("AiProviders").select(COLUMNS).where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
  return row === undefined ? undefined : toProvider(row);
}

export async function deleteAiProvider(db: Db, input: { namespaceId: string; name: string; actor: AuditActor }): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.deleteFrom("AiProviders").where("namespaceId", "=", input.namespaceId).where("name", "=", input.name).returning("id").executeTakeFirst();
    if (row === undefined) return false;
    await appendAuditEvent(trx, { namespaceId: input.namespaceId, ...auditActorColumns(input.actor), action: "aiProvider.delete", resourceType: "aiProvider", resourceId: input.name, details: { name: input.name } });
    return true;
  });
}
