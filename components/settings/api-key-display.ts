/**
 * Pure helpers for Settings → API keys: how a key's status, owner and expiry
 * read, and the expiry presets the create form offers. No React, so they are
 * unit-tested on their own.
 */

export type ApiKeyStatus = "active" | "expired" | "revoked" | "ownerDisabled";

export const STATUS_DISPLAY: Record<ApiKeyStatus, { label: string; color: "success" | "default" | "danger" | "warning" }> = {
  active: { label: "Active", color: "success" },
  expired: { label: "Expired", color: "warning" },
  revoked: { label: "Revoked", color: "danger" },
  ownerDisabled: { label: "Owner disabled", color: "warning" },
};

export type ApiKeyOwner = { type: "user"; id: string; email: string } | { type: "serviceAccount"; id: string; name: string } | null;

/** "alice@example.com", "ci-workers", or "No owner" (a bootstrap key acts for nobody but its namespace). */
export function ownerLabel(owner: ApiKeyOwner): { label: string; kind: string } {
  if (owner === null) return { label: "No owner", kind: "Namespace key" };
  return owner.type === "user" ? { label: owner.email, kind: "User" } : { label: owner.name, kind: "Service account" };
}

/** The key as it is shown once minted: `nf_<prefix>_…`, never more. */
export function maskedKey(prefix: string): string {
  return `nf_${prefix}_…`;
}

export const EXPIRY_PRESETS = [
  { id: "never", label: "Never", days: null },
  { id: "7d", label: "In 7 days", days: 7 },
  { id: "30d", label: "In 30 days", days: 30 },
  { id: "90d", label: "In 90 days", days: 90 },
  { id: "365d", label: "In 1 year", days: 365 },
] as const;
export type ExpiryPresetId = (typeof EXPIRY_PRESETS)[number]["id"];

/** The ISO instant a preset means from `now`, or null for a key that never expires. */
export function expiryFromPreset(id: ExpiryPresetId, now: Date): string | null {
  const preset = EXPIRY_PRESETS.find((p) => p.id === id);
  if (!preset || preset.days === null) return null;
  return new Date(now.getTime() + preset.days * 24 * 3600 * 1000).toISOString();
}

export const SCOPE_OPTIONS = [
  { id: "worker", label: "Worker", detail: "Poll for tasks, send heartbeats, report results and logs." },
  { id: "admin", label: "Admin", detail: "Everything in this namespace: definitions, runs, operator actions, keys." },
] as const;
export type ScopeId = (typeof SCOPE_OPTIONS)[number]["id"];

/** Keeps only known scopes, in the canonical order, once each. */
export function normalizeScopes(values: readonly string[]): ScopeId[] {
  return SCOPE_OPTIONS.map((s) => s.id).filter((id) => values.includes(id));
}
