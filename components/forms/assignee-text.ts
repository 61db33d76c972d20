/** The assignee text of a HUMAN node or a reassignment: "user:<email>", "group:<name>", "role:<role>", "anyone", or an expression. */

export const ASSIGNEE_KINDS = ["anyone", "user", "group", "role", "expression"] as const;
export type AssigneeKind = (typeof ASSIGNEE_KINDS)[number];
export const ASSIGNEE_ROLES = ["viewer", "operator", "editor", "admin"] as const;

/** An assignee text taken apart for the picker: `user:ada@x` is { kind: "user", value: "ada@x" }; absent is anyone. */
export function parseAssignee(text: string | undefined): { kind: AssigneeKind; value: string } {
  if (text === undefined || text === "" || text === "anyone") return { kind: "anyone", value: "" };
  const m = /^(user|group|role):(.*)$/s.exec(text);
  if (m) return { kind: m[1] as "user" | "group" | "role", value: m[2] ?? "" };
  return { kind: "expression", value: text };
}

/** The picker's choice as assignee text; anyone is absent (the engine's default). */
export function formatAssignee(kind: AssigneeKind, value: string): string | undefined {
  if (kind === "anyone") return undefined;
  if (kind === "expression") return value === "" ? undefined : value;
  return `${kind}:${value}`;
}
