import type { FieldError } from "../forms/field-errors";
import { formatRelativeTime } from "../format";

/** The inbox's tabs; each is a `humanTasks.inbox` query (Closed: every view, state closed). */
export const INBOX_TABS = [
  { id: "mine", label: "My tasks", short: "Mine", view: "mine", state: "open" },
  { id: "groups", label: "My groups", short: "Groups", view: "groups", state: "open" },
  { id: "unclaimed", label: "Unclaimed", short: "Unclaimed", view: "unclaimed", state: "open" },
  { id: "closed", label: "Closed", short: "Closed", view: "all", state: "closed" },
] as const;
export type InboxTabId = (typeof INBOX_TABS)[number]["id"];

export function isInboxTab(value: unknown): value is InboxTabId {
  return INBOX_TABS.some((t) => t.id === value);
}

export type HumanTaskStatus = "PENDING" | "CLAIMED" | "COMPLETED" | "CANCELED" | "EXPIRED";

const STATUS_LABEL: Readonly<Record<HumanTaskStatus, string>> = { PENDING: "Open", CLAIMED: "Claimed", COMPLETED: "Completed", CANCELED: "Cancelled", EXPIRED: "Expired" };

export function statusLabel(status: HumanTaskStatus): string {
  return STATUS_LABEL[status];
}

/** "Due in 2 hours", "Overdue: due 3 days ago", or null without a deadline. */
export function dueText(dueAt: string | null, overdue: boolean, now: Date): string | null {
  if (!dueAt) return null;
  const when = formatRelativeTime(new Date(dueAt), now);
  return overdue ? `Overdue: due ${when}` : `Due ${when}`;
}

/**
 * The navigation badge. The views overlap (a pending task assigned to me is
 * both "mine" and "unclaimed"; see server/human-tasks/list-human-tasks.ts), so
 * their sum would count it twice: the badge shows the tasks directed at me
 * (mine + my groups' and roles'), and only when there are none, the unclaimed
 * ones anybody here may take, in a quieter style.
 */
export function inboxBadge(counts: { mine: number; groups: number; unclaimed: number } | undefined): { count: number; kind: "yours" | "unclaimed" } | null {
  if (!counts) return null;
  if (counts.mine + counts.groups > 0) return { count: counts.mine + counts.groups, kind: "yours" };
  if (counts.unclaimed > 0) return { count: counts.unclaimed, kind: "unclaimed" };
  return null;
}

/** What a refused claim, release or submission tells the person, and the field errors to draw on the form. */
export interface ActionFailure {
  title: string;
  message: string;
  fieldErrors: FieldError[];
}

function isFieldError(value: unknown): value is FieldError {
  return typeof value === "object" && value !== null && typeof (value as FieldError).path === "string" && typeof (value as FieldError).message === "string";
}

/** A tRPC client error (`{ message, data: { code, fieldErrors? } }`) in the inbox's words. */
export function describeFailure(error: unknown, action: "claim" | "release" | "submit" | "reassign"): ActionFailure {
  const e = error as { message?: unknown; data?: { code?: unknown; fieldErrors?: unknown } | null } | null;
  const code = typeof e?.data?.code === "string" ? e.data.code : undefined;
  const message = typeof e?.message === "string" && e.message ? e.message : "Something went wrong. Try again.";
  const fieldErrors = Array.isArray(e?.data?.fieldErrors) ? e.data.fieldErrors.filter(isFieldError) : [];
  switch (code) {
    case "BAD_REQUEST":
      return { title: fieldErrors.length > 0 ? "Some fields need attention" : "The server refused the form", message, fieldErrors };
    case "FORBIDDEN":
      return { title: `You cannot ${action === "submit" ? "complete" : action} this task`, message, fieldErrors: [] };
    case "CONFLICT":
      return { title: action === "claim" ? "Someone else has this task" : "This task has moved on", message, fieldErrors: [] };
    case "NOT_FOUND":
      return { title: "This task is gone", message, fieldErrors: [] };
    default:
      return { title: { submit: "Not submitted", claim: "Not claimed", release: "Not released", reassign: "Not reassigned" }[action], message, fieldErrors: [] };
  }
}

/** Leading-edge-free debounce for bursts of stream events: one refetch per quiet `ms`. */
export function debounce(fn: () => void, ms: number): { call: () => void; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return {
    call() {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        fn();
      }, ms);
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
