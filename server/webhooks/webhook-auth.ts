import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookAuthMode } from "@/db/schema";

/**
 * Whether a call to a webhook carries its secret, in one of three shapes:
 *
 * - `token`: the secret itself in a header (`Bearer ` allowed in front).
 * - `hmac-sha256`: GitHub's shape, `X-Hub-Signature-256: sha256=<hex>`, an
 *   HMAC-SHA256 of the raw body under the secret (the `sha256=` is optional).
 * - `hmac-sha256-timestamped`: Stripe's shape, `t=<unix seconds>,v1=<hex>`
 *   (several `v1` allowed, as while a sender rotates), an HMAC of
 *   `<t>.<raw body>`; refused outside `toleranceSeconds` of now, and its
 *   digest returned so the caller can refuse a replay within the window.
 *
 * Every comparison is of SHA-256 digests in constant time, so neither the
 * length nor a prefix of the secret leaks through timing. A refusal says why
 * for the call record; the sender is told only that it was refused.
 */

export interface WebhookAuthInput {
  mode: WebhookAuthMode;
  secret: string;
  /** The auth header's value, or null when the call has none. */
  header: string | null;
  body: Uint8Array;
  toleranceSeconds: number;
  nowSeconds: number;
}

export type WebhookAuthVerdict = { ok: true; signatureDigest: string | null } | { ok: false; refusal: string };

export const DEFAULT_AUTH_HEADERS: Record<WebhookAuthMode, string> = {
  token: "x-webhook-token",
  "hmac-sha256": "x-hub-signature-256",
  "hmac-sha256-timestamped": "x-webhook-signature",
};

function digest(value: string | Uint8Array): Buffer {
  return createHash("sha256").update(value).digest();
}

function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function hmacHex(secret: string, ...parts: (string | Uint8Array)[]): string {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return mac.digest("hex");
}

export function verifyWebhookCall(input: WebhookAuthInput): WebhookAuthVerdict {
  const header = input.header?.trim() ?? "";
  if (header === "") return { ok: false, refusal: "the auth header is missing" };
  switch (input.mode) {
    case "token": {
      const token = header.replace(/^Bearer\s+/i, "");
      return sameSecret(token, input.secret) ? { ok: true, signatureDigest: null } : { ok: false, refusal: "the token does not match" };
    }
    case "hmac-sha256": {
      const given = header.replace(/^sha256=/i, "").toLowerCase();
      return sameSecret(given, hmacHex(input.secret, input.body)) ? { ok: true, signatureDigest: null } : { ok: false, refusal: "the signature does not match the body" };
    }
    case "hmac-sha256-timestamped": {
      const fields = header.split(",").map((part) => part.trim().split("="));
      const timestamp = fields.find(([key]) => key === "t")?.[1];
      const signatures = fields.filter(([key]) => key === "v1").map(([, value]) => (value ?? "").toLowerCase());
      if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) {
        return { ok: false, refusal: "the signature header is not t=<unix seconds>,v1=<hex>" };
      }
      if (Math.abs(input.nowSeconds - Number(timestamp)) > input.toleranceSeconds) {
        return { ok: false, refusal: `the signature's timestamp is more than ${input.toleranceSeconds} s from now` };
      }
      const expected = hmacHex(input.secret, `${timestamp}.`, input.body);
      // Every candidate is compared, so the time taken does not say which (if any) matched.
      const matched = signatures.map((s) => sameSecret(s, expected)).includes(true);
      return matched ? { ok: true, signatureDigest: digest(header).toString("hex") } : { ok: false, refusal: "the signature does not match the body" };
    }
  }
}

/** What a sender puts in the header: for tests, the console's sample call and a sender's docs. */
export function signWebhookCall(mode: WebhookAuthMode, secret: string, body: string | Uint8Array, nowSeconds: number): string {
  switch (mode) {
    case "token":
      return secret;
    case "hmac-sha256":
      return `sha256=${hmacHex(secret, body)}`;
    case "hmac-sha256-timestamped":
      return `t=${nowSeconds},v1=${hmacHex(secret, `${nowSeconds}.`, body)}`;
  }
}
