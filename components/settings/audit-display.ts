/**
 * Pure helpers for Settings → Audit: how an event's action, actor, resource
 * and details read in the table. No React, so they are unit-tested on their own.
 */

/** What each recorded action means, in words; an action missing here shows its code. */
const ACTION_LABELS: Record<string, string> = {
  "workflowDefinition.create": "Saved a workflow version",
  "workflowDefinition.archive": "Deleted a workflow",
  "taskDefinition.upsert": "Saved a task definition",
  "workflow.pause": "Paused a run",
  "workflow.resume": "Resumed a run",
  "workflow.terminate": "Terminated a run",
  "workflow.retry": "Retried a run",
  "workflow.rerun": "Reran a run",
  "workflow.restart": "Restarted a run",
  "task.complete": "Completed a task by hand",
  "task.skip": "Skipped a task",
  "human-task.claim": "Claimed a human task",
  "human-task.release": "Released a human task",
  "human-task.reassign": "Reassigned a human task",
  "human-task.approve": "Approved a human task (more approvals needed)",
  "human-task.complete": "Completed a human task",
  "human-task.escalate": "Escalated a human task",
  "form-template.save": "Saved a form template",
  "apiKey.create": "Created an API key",
  "apiKey.revoke": "Revoked an API key",
  "apiKey.rotate": "Rotated an API key",
  "serviceAccount.create": "Created a service account",
  "serviceAccount.disable": "Disabled a service account",
  "group.create": "Created a group",
  "group.delete": "Deleted a group",
  "group.setRoles": "Changed a group's roles",
  "group.member.add": "Added a group member",
  "group.member.remove": "Removed a group member",
  "namespace.create": "Created the namespace",
  "namespace.member.set": "Set a member's role",
  "namespace.member.remove": "Removed a member",
  "auth.signIn": "Signed in",
  "auth.signInFailed": "Failed sign-in",
  "user.setupOwner": "Set up the owner",
  "user.create": "Created a user",
  "user.disable": "Disabled a user",
  "user.enable": "Enabled a user",
};

export function actionLabel(action: string): string {
  return ACTION_LABELS[action] ?? action;
}

/** Actions that deserve the eye: a refusal or something hard to undo. */
export function actionTone(action: string): "danger" | "default" {
  return /(^auth\.signInFailed$|\.(revoke|delete|disable|terminate|remove)$)/.test(action) ? "danger" : "default";
}

export type AuditScope = "namespace" | "instance";

/** The action filter's choices: each a prefix the list is filtered by ("" for everything). */
export const ACTION_FILTERS: readonly { id: string; label: string; prefix: string; scopes: readonly AuditScope[] }[] = [
  { id: "all", label: "All actions", prefix: "", scopes: ["namespace", "instance"] },
  { id: "workflowDefinition", label: "Workflow definitions", prefix: "workflowDefinition.", scopes: ["namespace"] },
  { id: "taskDefinition", label: "Task definitions", prefix: "taskDefinition.", scopes: ["namespace"] },
  { id: "workflow", label: "Run actions", prefix: "workflow.", scopes: ["namespace"] },
  { id: "task", label: "Task actions", prefix: "task.", scopes: ["namespace"] },
  { id: "humanTask", label: "Human tasks", prefix: "human-task.", scopes: ["namespace"] },
  { id: "apiKey", label: "API keys", prefix: "apiKey.", scopes: ["namespace"] },
  { id: "serviceAccount", label: "Service accounts", prefix: "serviceAccount.", scopes: ["namespace"] },
  { id: "member", label: "Members", prefix: "namespace.member.", scopes: ["namespace"] },
  { id: "group", label: "Groups", prefix: "group.", scopes: ["namespace"] },
  { id: "auth", label: "Sign-ins", prefix: "auth.", scopes: ["instance"] },
  { id: "user", label: "Users", prefix: "user.", scopes: ["instance"] },
];

export interface AuditActorView {
  type: "user" | "serviceAccount" | "apiKey" | "system";
  id: string | null;
  name: string | null;
  keyPrefix: string | null;
}

/** The actor as two lines: who, then what kind (for a key, its masked prefix; empty when there is nothing to add). */
export function actorLabel(actor: AuditActorView): { primary: string; secondary: string } {
  switch (actor.type) {
    case "user":
      return { primary: actor.name ?? "Unknown user", secondary: actor.name ? "User" : `User ${shortId(actor.id ?? "")}` };
    case "apiKey":
      return {
        primary: actor.name ?? "Unknown API key",
        secondary: actor.keyPrefix ? `API key nf_${actor.keyPrefix}_…` : `API key ${shortId(actor.id ?? "")}`,
      };
    case "serviceAccount":
      return { primary: actor.name ?? "Unknown service account", secondary: "Service account" };
    case "system":
      // No id: nobody signed in (a failed sign-in), so there is nobody more to name.
      return actor.id ? { primary: actor.id, secondary: "System" } : { primary: "System", secondary: "" };
  }
}

const RESOURCE_LABELS: Record<string, string> = {
  workflowDefinition: "Workflow definition",
  taskDefinition: "Task definition",
  workflow: "Run",
  apiKey: "API key",
  serviceAccount: "Service account",
  group: "Group",
  namespace: "Namespace",
  user: "User",
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A uuid cut to its last 8 characters (uuidv7's first ones are a timestamp, alike for ids made together); anything else as is. */
export function shortId(id: string): string {
  return UUID.test(id) ? `…${id.slice(-8)}` : id;
}

/** "Workflow definition" + "orders"; null when the event is about nothing in particular. */
export function resourceLabel(type: string | null, id: string | null): { kind: string; name: string } | null {
  if (type === null && id === null) return null;
  return { kind: type === null ? "" : (RESOURCE_LABELS[type] ?? type), name: id === null ? "" : shortId(id) };
}

const MAX_SUMMARY = 160;

function valueText(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.every((v) => v === null || typeof v !== "object") ? value.map(valueText).join(", ") || "none" : `${value.length} items`;
  return JSON.stringify(value);
}

/**
 * The details object on one line: `name` bare and first, `version` as "v2" beside it, the rest
 * as "key: value", joined by " · " and cut at 160 characters. The full
 * object is the row's tooltip.
 */
export function summarizeDetails(details: unknown): string {
  if (details === null || typeof details !== "object" || Array.isArray(details)) return details === undefined ? "" : valueText(details);
  const { name, version, ...rest } = details as Record<string, unknown>;
  const title = [name === undefined ? "" : valueText(name), typeof version === "number" ? `v${version}` : ""].filter(Boolean).join(" ");
  if (version !== undefined && typeof version !== "number") rest.version = version;
  const parts = [title, ...Object.entries(rest).map(([key, value]) => `${key}: ${valueText(value)}`)].filter(Boolean);
  const text = parts.join(" · ");
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY - 1)}…` : text;
}
