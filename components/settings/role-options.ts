import type { NamespaceRole } from "@/server/auth/principal";

/** The four namespace roles, weakest first, as the UI explains them (server/auth/principal.ts grants them). */
export const ROLE_OPTIONS: readonly { id: NamespaceRole; label: string; detail: string }[] = [
  { id: "viewer", label: "Viewer", detail: "Sees workflows, runs and tasks." },
  { id: "operator", label: "Operator", detail: "Also starts, pauses, retries and completes runs." },
  { id: "editor", label: "Editor", detail: "Also creates and changes workflow definitions." },
  { id: "admin", label: "Admin", detail: "Also manages members, groups and API keys." },
];

export function roleLabel(role: NamespaceRole): string {
  return ROLE_OPTIONS.find((r) => r.id === role)?.label ?? role;
}
