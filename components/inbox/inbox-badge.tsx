"use client";

import { useQuery } from "@tanstack/react-query";
import { useNamespace } from "../console-session";
import { useTRPC } from "../trpc";
import { inboxBadge } from "./inbox-model";

/** The number beside Inbox in the navigation; live through the shell's inbox stream. */
export function InboxCountBadge({ className = "ml-auto" }: { className?: string }) {
  const namespace = useNamespace();
  const trpc = useTRPC();
  const counts = useQuery(trpc.humanTasks.counts.queryOptions({ namespace: namespace ?? "" }, { enabled: namespace !== null }));
  const badge = inboxBadge(counts.data);
  if (!badge) return null;
  const overdue = counts.data?.overdue ?? 0;
  const label =
    badge.kind === "yours"
      ? `${badge.count} ${badge.count === 1 ? "task" : "tasks"} for you${overdue > 0 ? `, ${overdue} overdue` : ""}`
      : `${badge.count} unclaimed ${badge.count === 1 ? "task" : "tasks"}${overdue > 0 ? `, ${overdue} overdue` : ""}`;
  const tone = overdue > 0 ? "bg-danger text-white" : badge.kind === "yours" ? "bg-accent text-accent-foreground" : "bg-default text-foreground";
  return (
    <span className={`${className} min-w-5 rounded-full px-1.5 text-center text-[11px] leading-5 font-semibold ${tone}`} data-kind={badge.kind} data-testid="inbox-count" title={label}>
      <span aria-hidden>{badge.count > 99 ? "99+" : badge.count}</span>
      {/* The link reads "Inbox, 2 tasks for you" instead of "Inbox 2". */}
      <span className="sr-only">, {label}</span>
    </span>
  );
}
