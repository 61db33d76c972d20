import { z } from "zod";
import { authenticateApiKey } from "../../auth/api-keys";
import { ConductorError } from "../conductor-error";
import { DEFAULT_TOKEN_TTL_SECONDS, mintConductorToken } from "../conductor-token";
import { defineConductorRoute } from "../define-conductor-route";

/**
 * Orkes' token exchange: `{keyId, keySecret}` → `{token}`. A node-flow API key
 * `nf_<prefix>_<secret>` is the pair: keyId is the prefix (with or without
 * its `nf_`), keySecret the secret after it. The key is checked exactly as a
 * bearer key is (hash, revoked, expired, owner disabled); a wrong pair is one
 * answer, 401 INVALID_TOKEN, whichever half was wrong.
 */

/** The whole key a Conductor key id and secret stand for. */
export function apiKeyOfPair(keyId: string, keySecret: string): string {
  // A client configured with the whole key as its secret works too.
  if (keySecret.startsWith("nf_")) return keySecret;
  const prefix = keyId.startsWith("nf_") ? keyId.slice(3) : keyId;
  return `nf_${prefix}_${keySecret}`;
}

export const tokenRoute = defineConductorRoute({
  method: "POST",
  path: "/token",
  auth: "public",
  summary: "Exchange an API key's id and secret for a short-lived token, sent as X-Authorization",
  body: z.looseObject({ keyId: z.string().min(1).max(200), keySecret: z.string().min(1).max(200) }),
  handler: async ({ deps, body }) => {
    const key = apiKeyOfPair(body.keyId, body.keySecret);
    const principal = await authenticateApiKey(deps.db, key);
    if (principal === null) throw new ConductorError(401, "The key id and secret are not those of a valid API key");
    const prefix = key.split("_")[1]!;
    const token = mintConductorToken(deps.secret, { apiKeyId: principal.apiKeyId, prefix }, (deps.now ?? Date.now)(), deps.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS);
    return { status: 200, json: { token } };
  },
});
