import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { AuditActorType, Database, ServiceAccountRow } from "../../db/schema";
import {
  getApiKey,
  insertApiKey,
  listApiKeyRows,
  markApiKeyRevoked,
  touchApiKeyLastUsed,
} from "../store/api-keys";
import type { ApiKeyCredentialRow, ApiKeyRecord, ApiKeyStatus } from "../store/api-keys";
import { appendAuditEvent } from "../store/audit-events";
import { getServiceAccount, insertServiceAccount, listServiceAccountRows, markServiceAccountDisabled } from "../store/service-accounts";
import { findUserById } from "../store/users";
import { apiKeyCache } from "./api-key-cache";
import { IdentityError } from "./identity-error";
import { API_KEY_SCOPES } from "./principal";
import type { ApiKeyScope, Principal } from "./principal";

/**
 * API keys and the service accounts that own them: minting, authenticating,
 * listing, revoking, rotating. A key reads `nf_<prefix>_<secret>`:
 *
 * - `prefix`: 12 lowercase hex characters (48 random bits). Not secret: shown
 *   in the UI, recorded in the audit log, and the unique column a presented key
 *   is looked up by before its namespace is known.
 * - `secret`: 32 random bytes, base64url (43 characters). Never stored; only
 *   the SHA-256 of the whole key is.
 *
 * Every change runs in one transaction with the AuditEvents row that records
 * it, and refuses with an IdentityError (not-found, conflict, invalid-input)
 * before its first write. Audit details name their fields one by one —
 * prefix, name, scopes, owner — never the key or its hash.
 */

type Executor = Kysely<Database>;

const KEY_PATTERN = /^nf_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const PREFIX_BYTES = 6;
const SECRET_BYTES = 32;
/** Tries at drawing an unused prefix. At a million keys a 48-bit draw collides about once in 280 million. */
const PREFIX_ATTEMPTS = 5;
const HASH_SCHEME = "sha256:";

/** Who made a change, as AuditEvents records it. */
export interface CredentialActor {
  type: AuditActorType;
  id: string | null;
  /** Informational (a client can claim any address through a proxy header). */
  ipAddress?: string | null;
}

/** The audit actor for a principal: the user, or the API key itself (its owner is on the key's row). */
export function actorOfPrincipal(principal: Principal, ipAddress: string | null = null): CredentialActor {
  return principal.kind === "user" ? { type: "user", id: principal.userId, ipAddress } : { type: "apiKey", id: principal.apiKeyId, ipAddress };
}

/** The "createdBy" text stored on rows a principal creates: `user:<id>` or `apiKey:<id>`. */
export function createdByOfPrincipal(principal: Principal): string {
  return principal.kind === "user" ? `user:${principal.userId}` : `apiKey:${principal.apiKeyId}`;
}

// ---------------------------------------------------------------------------
// The key format

/** A fresh key and its parts. `prefix` may be supplied (tests force collisions with it). */
export function generateApiKey(prefix: string = randomBytes(PREFIX_BYTES).toString("hex")): { prefix: string; key: string } {
  const key = `nf_${prefix}_${randomBytes(SECRET_BYTES).toString("base64url")}`;
  if (!KEY_PATTERN.test(key)) throw new Error(`prefix must be ${PREFIX_BYTES * 2} lowercase hex characters, got "${prefix}"`);
  return { prefix, key };
}

/** The prefix of a well-formed key, or null for anything else (which then never reaches the database). */
export function parseApiKey(key: string): { prefix: string } | null {
  const match = KEY_PATTERN.exec(key);
  return match?.[1] === undefined ? null : { prefix: match[1] };
}

/**
 * The stored form of a key. A fast hash is right here where it would be wrong
 * for a password: a password is guessable, so its hash must make each guess
 * expensive (scrypt, passwords.ts), whereas this secret is 256 random bits —
 * no guess list exists, and brute force is out of reach at any hash speed.
 * A slow hash would buy nothing and cost every worker poll tens of
 * milliseconds of CPU, turning authentication into a denial-of-service lever.
 * Hashing at all still matters: a leaked table or backup is not a set of
 * working keys. The scheme tag leaves room to change the hash later.
 */
export function hashApiKey(key: string): string {
  return HASH_SCHEME + createHash("sha256").update(key, "utf8").digest("hex");
}

/** Constant-time comparison of two stored-form hashes (a mismatch in length or scheme is simply false). */
function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The token of an `Authorization: Bearer <token>` header, or null when the
 * header is absent, uses another scheme, or is malformed. The scheme is
 * case-insensitive (RFC 9110 §11.1).
 */
export function parseBearer(header: string | null): string | null {
  if (header === null) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1] ?? null;
}

// ---------------------------------------------------------------------------
// Authentication

/**
 * The principal a presented key stands for, or null: malformed, unknown
 * prefix, wrong secret, revoked, expired, or owned by a disabled user or
 * service account. All of these are one answer (null → 401) so a caller
 * learns nothing about which keys exist.
 *
 * The lookup by prefix is not constant-time, and need not be: the prefix is
 * public. The secret is compared only as a hash, with timingSafeEqual. The
 * row comes from the process's ApiKeyCache when it is listening for changes
 * (api-key-cache.ts: a revocation still bites within milliseconds).
 */
export async function authenticateApiKey(db: Executor, presentedKey: string): Promise<(Principal & { kind: "apiKey" }) | null> {
  const parsed = parseApiKey(presentedKey);
  if (parsed === null) return null;
  const row = await apiKeyCache.find(db, parsed.prefix);
  if (row === undefined) return null;
  if (!hashesEqual(hashApiKey(presentedKey), row.keyHash)) return null;
  return activeKeyPrincipal(db, row);
}

/**
 * The principal of the key with `prefix` and id `apiKeyId`, or null when it no
 * longer exists or is revoked, expired or owned by a disabled owner — for a
 * credential derived from a key that was checked earlier (a Conductor token,
 * which carries the key's prefix and id, never its secret). Revoking the key
 * therefore revokes every token minted from it, at once.
 */
export async function authenticateApiKeyReference(
  db: Executor,
  reference: { prefix: string; apiKeyId: string },
): Promise<(Principal & { kind: "apiKey" }) | null> {
  const row = await apiKeyCache.find(db, reference.prefix);
  if (row === undefined || row.id !== reference.apiKeyId) return null;
  return activeKeyPrincipal(db, row);
}

async function activeKeyPrincipal(db: Executor, row: ApiKeyCredentialRow): Promise<(Principal & { kind: "apiKey" }) | null> {
  if (row.revoked || row.expired || !row.ownerActive) return null;
  // Only a stale value is written: a busy worker polling many times a second
  // costs one UPDATE a minute, not one per poll.
  if (row.lastUsedStale) await touchApiKeyLastUsed(db, row.id);
  return {
    kind: "apiKey",
    apiKeyId: row.id,
    namespaceId: row.namespaceId,
    scopes: knownScopes(row.scopes),
    userId: row.userId,
    serviceAccountId: row.serviceAccountId,
  };
}

/** Scopes as stored, narrowed to the ones this build knows: an unknown scope grants nothing. */
function knownScopes(scopes: readonly string[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope));
}

// ---------------------------------------------------------------------------
// Creating, listing, revoking, rotating

const Id = z.guid("must be a UUID");
const Name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const ActorSchema = z.object({
  type: z.enum(["user", "serviceAccount", "apiKey", "system"]),
  id: z.string().max(200).nullable(),
  ipAddress: z.string().max(200).nullish(),
});

export const CreateApiKeyInputSchema = z
  .object({
    namespaceId: Id,
    name: Name,
    scopes: z
      .array(z.enum(API_KEY_SCOPES))
      .min(1, "choose at least one scope")
      .transform((scopes) => API_KEY_SCOPES.filter((scope) => scopes.includes(scope))),
    /** The user the key acts for. At most one of userId and serviceAccountId. */
    userId: Id.nullish(),
    serviceAccountId: Id.nullish(),
    /** Stored on the row as is: `user:<id>`, `apiKey:<id>`, or a tool's name ("nf bootstrap"). */
    createdBy: z.string().max(200).nullable(),
    expiresAt: z.date().nullish(),
    /** Recorded in AuditEvents; defaults to `{ type: "system", id: createdBy }`. */
    actor: ActorSchema.optional(),
  })
  .refine((input) => !(input.userId && input.serviceAccountId), {
    message: "a key acts for a user or for a service account, not both",
    path: ["serviceAccountId"],
  });
export type CreateApiKeyInput = z.input<typeof CreateApiKeyInputSchema>;

export interface CreatedApiKey {
  id: string;
  prefix: string;
  /** The whole key. Returned once, here; only its hash is stored. */
  key: string;
}

export interface CreateApiKeyOptions {
  /** Draws a prefix; crypto-random by default. Tests pass a sequence to force a collision. */
  generatePrefix?: () => string;
  /** Epoch ms, for the "expiresAt is in the future" check; Date.now by default. */
  now?: () => number;
}

/**
 * Mints a key in `namespaceId` for a user, a service account, or neither (a
 * bootstrap key), and records "apiKey.create". Throws IdentityError for a
 * bad input, an owner that does not exist in the namespace, or a disabled one.
 * Runs in the caller's transaction when given one.
 */
export async function createApiKey(db: Executor, rawInput: CreateApiKeyInput, options: CreateApiKeyOptions = {}): Promise<CreatedApiKey> {
  const input = parse(CreateApiKeyInputSchema, rawInput);
  if (input.expiresAt && input.expiresAt.getTime() <= (options.now ?? Date.now)()) {
    throw new IdentityError("invalid-input", "expiresAt: must be in the future");
  }
  return inTransaction(db, async (trx) => {
    const owner = await checkOwner(trx, { namespaceId: input.namespaceId, userId: input.userId ?? null, serviceAccountId: input.serviceAccountId ?? null });
    const created = await insertWithFreshPrefix(
      trx,
      {
        namespaceId: input.namespaceId,
        name: input.name,
        scopes: input.scopes,
        userId: input.userId ?? null,
        serviceAccountId: input.serviceAccountId ?? null,
        createdBy: input.createdBy,
        expiresAt: input.expiresAt ?? null,
      },
      options.generatePrefix,
    );
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(input.actor, input.createdBy),
      action: "apiKey.create",
      resourceType: "apiKey",
      resourceId: created.record.id,
      details: {
        name: created.record.name,
        prefix: created.record.prefix,
        scopes: created.record.scopes,
        expiresAt: created.record.expiresAt?.toISOString() ?? null,
        owner,
      },
    });
    return { id: created.record.id, prefix: created.record.prefix, key: created.key };
  });
}

type OwnerRef = { type: "user"; id: string } | { type: "serviceAccount"; id: string; name: string } | null;

/** The key's owner must exist (in the key's namespace, for a service account) and be enabled: a key it could never use is refused up front. */
async function checkOwner(
  trx: Executor,
  input: { namespaceId: string; userId: string | null; serviceAccountId: string | null },
): Promise<OwnerRef> {
  if (input.serviceAccountId !== null) {
    const account = await getServiceAccount(trx, { namespaceId: input.namespaceId, serviceAccountId: input.serviceAccountId });
    if (account === undefined) throw new IdentityError("not-found", "serviceAccountId: no such service account in this namespace");
    if (account.disabledAt !== null) throw new IdentityError("conflict", `service account "${account.name}" is disabled`);
    return { type: "serviceAccount", id: account.id, name: account.name };
  }
  if (input.userId !== null) {
    const user = await findUserById(trx, input.userId);
    if (user === null) throw new IdentityError("not-found", "userId: no such user");
    if (user.disabledAt !== null) throw new IdentityError("conflict", "the user is disabled");
    return { type: "user", id: user.id };
  }
  return null;
}

async function insertWithFreshPrefix(
  trx: Executor,
  row: Omit<Parameters<typeof insertApiKey>[1], "prefix" | "keyHash">,
  generatePrefix?: () => string,
): Promise<{ record: ApiKeyRecord; key: string }> {
  for (let attempt = 0; attempt < PREFIX_ATTEMPTS; attempt++) {
    const { prefix, key } = generateApiKey(generatePrefix?.());
    const record = await insertApiKey(trx, { ...row, prefix, keyHash: hashApiKey(key) });
    if (record !== undefined) return { record, key };
  }
  throw new Error(`No unused API key prefix after ${PREFIX_ATTEMPTS} draws; the random source is suspect`);
}

export interface ApiKeySummary {
  id: string;
  prefix: string;
  name: string;
  scopes: ApiKeyScope[];
  owner: { type: "user"; id: string; email: string } | { type: "serviceAccount"; id: string; name: string } | null;
  status: ApiKeyStatus;
  createdAt: Date;
  createdBy: string | null;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** A namespace's keys, live ones first, then newest first; at most `limit` (default 500). Never a hash. */
export async function listApiKeys(db: Executor, input: { namespaceId: string; limit?: number }): Promise<ApiKeySummary[]> {
  const rows = await listApiKeyRows(db, { namespaceId: input.namespaceId, limit: input.limit ?? 500 });
  return rows.map((row) => ({
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    scopes: knownScopes(row.scopes),
    owner:
      row.userId !== null && row.ownerUserEmail !== null
        ? { type: "user", id: row.userId, email: row.ownerUserEmail }
        : row.serviceAccountId !== null && row.ownerServiceAccountName !== null
          ? { type: "serviceAccount", id: row.serviceAccountId, name: row.ownerServiceAccountName }
          : null,
    status: row.status,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
  }));
}

export const RevokeApiKeyInputSchema = z.object({ namespaceId: Id, apiKeyId: Id, actor: ActorSchema });
export type RevokeApiKeyInput = z.input<typeof RevokeApiKeyInputSchema>;

/**
 * Revokes a key from now on and records "apiKey.revoke". Refuses a key not in
 * the namespace (not-found) or already revoked (conflict). The row stays:
 * "which key did this, and when was it revoked?" is asked afterwards.
 */
export async function revokeApiKey(db: Executor, rawInput: RevokeApiKeyInput): Promise<{ id: string; prefix: string; revokedAt: Date }> {
  const input = parse(RevokeApiKeyInputSchema, rawInput);
  return inTransaction(db, async (trx) => {
    const revoked = await revokeLiveKey(trx, input);
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(input.actor, null),
      action: "apiKey.revoke",
      resourceType: "apiKey",
      resourceId: revoked.id,
      details: { name: revoked.name, prefix: revoked.prefix },
    });
    return { id: revoked.id, prefix: revoked.prefix, revokedAt: revoked.revokedAt ?? new Date() };
  });
}

/** Marks the key revoked, or refuses; the UPDATE is the arbiter between concurrent revokes and rotations. */
async function revokeLiveKey(trx: Executor, input: { namespaceId: string; apiKeyId: string }): Promise<ApiKeyRecord> {
  const revoked = await markApiKeyRevoked(trx, input);
  if (revoked !== undefined) return revoked;
  const existing = await getApiKey(trx, input);
  if (existing === undefined) throw new IdentityError("not-found", "no such API key in this namespace");
  throw new IdentityError("conflict", `API key ${existing.prefix} is already revoked`);
}

export const RotateApiKeyInputSchema = z.object({
  namespaceId: Id,
  apiKeyId: Id,
  actor: ActorSchema,
  createdBy: z.string().max(200).nullable(),
});
export type RotateApiKeyInput = z.input<typeof RotateApiKeyInputSchema>;

export interface RotatedApiKey extends CreatedApiKey {
  /** The key this one replaces, revoked in the same transaction. */
  replaced: { id: string; prefix: string };
}

/**
 * Replaces a live key with a new one of the same name, scopes, owner and
 * expiry, revoking the old one in the same transaction: there is never a
 * moment with both live or neither. Records "apiKey.rotate" on the old key,
 * naming the new one. Refuses a key that is revoked, expired (nothing left to
 * rotate: create a new one) or whose owner is disabled.
 */
export async function rotateApiKey(db: Executor, rawInput: RotateApiKeyInput, options: CreateApiKeyOptions = {}): Promise<RotatedApiKey> {
  const input = parse(RotateApiKeyInputSchema, rawInput);
  return inTransaction(db, async (trx) => {
    // Every refusal comes before the first write, so a caller that runs this
    // in its own transaction and catches the refusal is left with no change.
    const current = await getApiKey(trx, input);
    if (current === undefined) throw new IdentityError("not-found", "no such API key in this namespace");
    if (current.revokedAt !== null) throw new IdentityError("conflict", `API key ${current.prefix} is already revoked`);
    if (current.expiresAt !== null && current.expiresAt.getTime() <= (options.now ?? Date.now)()) {
      throw new IdentityError("conflict", `API key ${current.prefix} has expired; create a new key instead`);
    }
    await checkOwner(trx, current);
    // The read above took no lock; the revoking UPDATE is the arbiter, and a
    // rotation or revocation that committed in between makes this one refuse.
    const old = await revokeLiveKey(trx, input);
    const created = await insertWithFreshPrefix(
      trx,
      {
        namespaceId: old.namespaceId,
        name: old.name,
        scopes: old.scopes,
        userId: old.userId,
        serviceAccountId: old.serviceAccountId,
        createdBy: input.createdBy,
        expiresAt: old.expiresAt,
      },
      options.generatePrefix,
    );
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(input.actor, null),
      action: "apiKey.rotate",
      resourceType: "apiKey",
      resourceId: old.id,
      details: { name: old.name, prefix: old.prefix, newApiKeyId: created.record.id, newPrefix: created.record.prefix },
    });
    return { id: created.record.id, prefix: created.record.prefix, key: created.key, replaced: { id: old.id, prefix: old.prefix } };
  });
}

// ---------------------------------------------------------------------------
// Service accounts

export const CreateServiceAccountInputSchema = z.object({
  namespaceId: Id,
  name: Name,
  description: z.string().trim().max(500, "must be at most 500 characters").nullish(),
  createdBy: z.string().max(200).nullable(),
  actor: ActorSchema,
});
export type CreateServiceAccountInput = z.input<typeof CreateServiceAccountInputSchema>;

/** Creates a service account and records "serviceAccount.create"; a duplicate name in the namespace is a conflict. */
export async function createServiceAccount(db: Executor, rawInput: CreateServiceAccountInput): Promise<ServiceAccountRow> {
  const input = parse(CreateServiceAccountInputSchema, rawInput);
  return inTransaction(db, async (trx) => {
    const account = await insertServiceAccount(trx, {
      namespaceId: input.namespaceId,
      name: input.name,
      description: input.description || null,
      createdBy: input.createdBy,
    });
    if (account === undefined) throw new IdentityError("conflict", `name: a service account named "${input.name}" already exists`);
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(input.actor, null),
      action: "serviceAccount.create",
      resourceType: "serviceAccount",
      resourceId: account.id,
      details: { name: account.name },
    });
    return account;
  });
}

export interface ServiceAccountSummary {
  id: string;
  name: string;
  description: string | null;
  disabledAt: Date | null;
  createdAt: Date;
  createdBy: string | null;
  activeKeyCount: number;
}

export async function listServiceAccounts(db: Executor, input: { namespaceId: string }): Promise<ServiceAccountSummary[]> {
  const rows = await listServiceAccountRows(db, input);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    disabledAt: row.disabledAt,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    activeKeyCount: row.activeKeyCount,
  }));
}

export const DisableServiceAccountInputSchema = z.object({ namespaceId: Id, serviceAccountId: Id, actor: ActorSchema });
export type DisableServiceAccountInput = z.input<typeof DisableServiceAccountInputSchema>;

/**
 * Disables a service account and records "serviceAccount.disable". Its keys
 * are not revoked one by one: authentication refuses every key of a disabled
 * account, which takes effect on the next request, in one row.
 */
export async function disableServiceAccount(db: Executor, rawInput: DisableServiceAccountInput): Promise<ServiceAccountRow> {
  const input = parse(DisableServiceAccountInputSchema, rawInput);
  return inTransaction(db, async (trx) => {
    const account = await markServiceAccountDisabled(trx, input);
    if (account === undefined) {
      const existing = await getServiceAccount(trx, input);
      if (existing === undefined) throw new IdentityError("not-found", "no such service account in this namespace");
      throw new IdentityError("conflict", `service account "${existing.name}" is already disabled`);
    }
    await appendAuditEvent(trx, {
      namespaceId: input.namespaceId,
      ...auditActor(input.actor, null),
      action: "serviceAccount.disable",
      resourceType: "serviceAccount",
      resourceId: account.id,
      details: { name: account.name },
    });
    return account;
  });
}

// ---------------------------------------------------------------------------

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const message = issue === undefined ? "invalid input" : `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
  throw new IdentityError("invalid-input", message);
}

/** The AuditEvents actor columns; with no actor, the change is the system's on behalf of `createdBy` (e.g. "nf bootstrap"). */
function auditActor(
  actor: CredentialActor | undefined,
  createdBy: string | null,
): { actorType: AuditActorType; actorId: string | null; ipAddress: string | null } {
  return actor === undefined
    ? { actorType: "system", actorId: createdBy, ipAddress: null }
    : { actorType: actor.type, actorId: actor.id, ipAddress: actor.ipAddress ?? null };
}

/** Runs `fn` in the caller's transaction when `db` is one, else in a new one. */
async function inTransaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
