import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhookCall, verifyWebhookCall } from "./webhook-auth";
import type { WebhookAuthInput } from "./webhook-auth";

const secret = "whsec-test-0123456789";
const body = Buffer.from('{"order":42}');
const now = 1_800_000_000;
const base = { secret, body, toleranceSeconds: 300, nowSeconds: now };

function verify(overrides: Partial<WebhookAuthInput> & Pick<WebhookAuthInput, "mode" | "header">) {
  return verifyWebhookCall({ ...base, ...overrides });
}

describe("verifyWebhookCall: the accept/refuse table", () => {
  const githubSignature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const stripeSignature = `t=${now},v1=${createHmac("sha256", secret).update(`${now}.`).update(body).digest("hex")}`;

  it.each([
    ["token, exact", "token", secret, true],
    ["token, as a Bearer", "token", `Bearer ${secret}`, true],
    ["token, wrong", "token", "whsec-test-0123456780", false],
    ["token, a prefix of the secret", "token", secret.slice(0, 10), false],
    ["token, missing", "token", null, false],
    ["GitHub shape, as GitHub sends it", "hmac-sha256", githubSignature, true],
    ["GitHub shape, without sha256=", "hmac-sha256", githubSignature.slice(7), true],
    ["GitHub shape, upper-case hex", "hmac-sha256", githubSignature.toUpperCase(), true],
    ["GitHub shape, signed with another secret", "hmac-sha256", `sha256=${createHmac("sha256", "other").update(body).digest("hex")}`, false],
    ["GitHub shape, the secret itself", "hmac-sha256", secret, false],
    ["Stripe shape, as Stripe sends it", "hmac-sha256-timestamped", stripeSignature, true],
    ["Stripe shape, a second v1 during rotation", "hmac-sha256-timestamped", `t=${now},v1=${"0".repeat(64)},${stripeSignature.split(",")[1]}`, true],
    ["Stripe shape, no timestamp", "hmac-sha256-timestamped", stripeSignature.split(",")[1]!, false],
    ["Stripe shape, garbage", "hmac-sha256-timestamped", "not a signature", false],
  ] as const)("%s", (_label, mode, header, accepted) => {
    expect(verify({ mode, header }).ok).toBe(accepted);
  });

  it("refuses a body changed after signing, in both HMAC shapes", () => {
    const changed = Buffer.from('{"order":43}');
    expect(verify({ mode: "hmac-sha256", header: githubSignature, body: changed })).toEqual({ ok: false, refusal: "the signature does not match the body" });
    expect(verify({ mode: "hmac-sha256-timestamped", header: stripeSignature, body: changed }).ok).toBe(false);
  });

  it("refuses a timestamp outside the tolerance either way, and names the tolerance", () => {
    for (const skew of [-301, 301]) {
      const header = signWebhookCall("hmac-sha256-timestamped", secret, body, now + skew);
      expect(verify({ mode: "hmac-sha256-timestamped", header })).toEqual({ ok: false, refusal: "the signature's timestamp is more than 300 s from now" });
    }
    expect(verify({ mode: "hmac-sha256-timestamped", header: signWebhookCall("hmac-sha256-timestamped", secret, body, now - 299) }).ok).toBe(true);
  });

  it("gives a timestamped signature's digest (for refusing its replay), and none for the others", () => {
    const first = verify({ mode: "hmac-sha256-timestamped", header: stripeSignature });
    expect(first.ok && first.signatureDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(verify({ mode: "hmac-sha256-timestamped", header: stripeSignature })).toEqual(first);
    expect(verify({ mode: "hmac-sha256", header: githubSignature })).toEqual({ ok: true, signatureDigest: null });
  });

  it("signs what it verifies, in every shape", () => {
    for (const mode of ["token", "hmac-sha256", "hmac-sha256-timestamped"] as const) {
      expect(verify({ mode, header: signWebhookCall(mode, secret, body, now) }).ok).toBe(true);
    }
  });
});
