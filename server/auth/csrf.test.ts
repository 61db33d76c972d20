import { describe, expect, it } from "vitest";
import { checkSameOrigin } from "./csrf";

const cookie = { cookie: "theme=dark; nf_session=abc" };

function post(headers: Record<string, string>, url = "http://localhost:3000/api/trpc/auth.signOut"): Request {
  return new Request(url, { method: "POST", headers });
}

describe("checkSameOrigin", () => {
  it("lets safe methods through whatever they carry", () => {
    expect(checkSameOrigin(new Request("http://localhost:3000/x", { headers: { origin: "https://evil.example", ...cookie } }))).toEqual({ ok: true });
  });

  it("accepts a same-origin POST with the session cookie, by Origin or by Referer", () => {
    expect(checkSameOrigin(post({ origin: "http://localhost:3000", host: "localhost:3000", ...cookie })).ok).toBe(true);
    expect(checkSameOrigin(post({ referer: "http://localhost:3000/settings", host: "localhost:3000", ...cookie })).ok).toBe(true);
  });

  it("refuses a cross-origin POST carrying the session cookie", () => {
    const verdict = checkSameOrigin(post({ origin: "https://evil.example", host: "localhost:3000", ...cookie }));
    expect(verdict.ok).toBe(false);
  });

  it("refuses a sibling origin on another port or subdomain (same site, other origin)", () => {
    expect(checkSameOrigin(post({ origin: "http://localhost:4000", host: "localhost:3000", ...cookie })).ok).toBe(false);
    expect(
      checkSameOrigin(post({ origin: "https://blog.example.com", host: "flow.example.com" }, "https://flow.example.com/api/trpc/x")).ok,
    ).toBe(false);
  });

  it("refuses a cross-origin POST even without a cookie (a forged sign-in)", () => {
    expect(checkSameOrigin(post({ origin: "https://evil.example", host: "localhost:3000" })).ok).toBe(false);
  });

  it("refuses a POST with the cookie but no Origin or Referer, or an opaque \"null\" origin", () => {
    expect(checkSameOrigin(post({ host: "localhost:3000", ...cookie })).ok).toBe(false);
    expect(checkSameOrigin(post({ origin: "null", host: "localhost:3000", ...cookie })).ok).toBe(false);
  });

  it("lets a header-less POST without the cookie through (curl, scripts: nothing to forge)", () => {
    expect(checkSameOrigin(post({ host: "localhost:3000" })).ok).toBe(true);
  });

  it("exempts Bearer requests: a browser never attaches one by itself", () => {
    expect(checkSameOrigin(post({ authorization: "Bearer nf_0123456789ab_x", origin: "https://evil.example", ...cookie })).ok).toBe(true);
  });

  it("accepts the host a reverse proxy forwarded", () => {
    const request = post({ origin: "https://flow.example.com", host: "127.0.0.1:3000", "x-forwarded-host": "flow.example.com", ...cookie }, "http://127.0.0.1:3000/api/trpc/x");
    expect(checkSameOrigin(request).ok).toBe(true);
  });
});
