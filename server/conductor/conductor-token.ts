import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The token Conductor clients (Orkes' SDKs) exchange their key id and secret
 * for at `POST /token`, then send as `X-Authorization` on every call. A JWT
 * (HS256), because some clients decode it to learn when to refresh; its
 * claims name the API key (`sub` its id, `kid` its public prefix) and never
 * the secret, so a token is checked against the key's row on every request
 * and revoking the key revokes its tokens at once. Short-lived: a leaked token
 * is good for at most its TTL, and clients refresh on `EXPIRED_TOKEN`.
 *
 * The HMAC key is derived from the server secret with a fixed label rather
 * than being the secret itself, so a token can never be confused with
 * anything else the secret signs (sessions, sealed secrets).
 */

/** How long a token is good for, by default. Clients refresh on EXPIRED_TOKEN (and the Orkes JS client every 30 minutes anyway). */
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;

const ISSUER = "node-flow/conductor";
const KEY_LABEL = "node-flow conductor token v1";

export interface ConductorTokenClaims {
  /** The API key's id. */
  apiKeyId: string;
  /** The API key's public prefix: the unique column the key is looked up by. */
  prefix: string;
  /** Epoch seconds. */
  expiresAt: number;
}

export type TokenVerdict = { ok: true; claims: ConductorTokenClaims } | { ok: false; error: "EXPIRED_TOKEN" | "INVALID_TOKEN" };

function signingKey(secret: string): Buffer {
  return createHmac("sha256", secret).update(KEY_LABEL).digest();
}

function sign(secret: string, data: string): string {
  return createHmac("sha256", signingKey(secret)).update(data).digest("base64url");
}

function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

/** Mints a token for the key; `nowMs` is epoch ms. */
export function mintConductorToken(secret: string, key: { apiKeyId: string; prefix: string }, nowMs: number, ttlSeconds = DEFAULT_TOKEN_TTL_SECONDS): string {
  const iat = Math.floor(nowMs / 1000);
  const header = encodeJson({ alg: "HS256", typ: "JWT" });
  const payload = encodeJson({ iss: ISSUER, sub: key.apiKeyId, kid: key.prefix, iat, exp: iat + ttlSeconds });
  return `${header}.${payload}.${sign(secret, `${header}.${payload}`)}`;
}

/**
 * Checks a token's signature and expiry (not the key's state: the caller looks
 * the key up). The signature is checked first and in constant time, so
 * EXPIRED_TOKEN is only ever said of a token this server really issued.
 */
export function verifyConductorToken(secret: string, token: string, nowMs: number): TokenVerdict {
  const invalid = { ok: false, error: "INVALID_TOKEN" } as const;
  const parts = token.split(".");
  if (parts.length !== 3) return invalid;
  const [header, payload, signature] = parts as [string, string, string];
  const expected = Buffer.from(sign(secret, `${header}.${payload}`), "utf8");
  const presented = Buffer.from(signature, "utf8");
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return invalid;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return invalid;
  }
  if (typeof claims !== "object" || claims === null) return invalid;
  const { iss, sub, kid, exp } = claims as Record<string, unknown>;
  if (iss !== ISSUER || typeof sub !== "string" || typeof kid !== "string" || typeof exp !== "number") return invalid;
  if (exp * 1000 <= nowMs) return { ok: false, error: "EXPIRED_TOKEN" };
  return { ok: true, claims: { apiKeyId: sub, prefix: kid, expiresAt: exp } };
}
