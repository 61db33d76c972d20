"use client";

import { useQuery } from "@tanstack/react-query";
import { useNamespace } from "../console-session";
import { useTRPC } from "../trpc";
import { badgeCount } from "./inbox-model";

/** The number beside Inbox in the navigation; live through the shell's inbox stream. */
export function InboxCountBadge() {
  const namespace = useNamespace();
  const trpc = useTRPC();
  const counts = useQuery(trpc.humanTasks.counts.queryOptions({ namespace: namespace ?? "" }, { enabled: namespace !== null }));
  const n = badgeCount(counts.data);
  if (n === 0) return null;
  const overdue = counts.data?.overdue ?? 0;
  return (
    <span
      aria-label={`${n} open ${n === 1 ? "task" : "tasks"}${overdue > 0 ? `, ${overdue} overdue` : ""}`}
      className={`ml-auto min-w-5 rounded-full px-1.5 text-center text-[11px] leading-5 font-semibold ${overdue > 0 ? "bg-danger text-white" : "bg-accent text-accent-foreground"}`}
      data-testid="inbox-count"
    >
      {n > 99 ? "99+" : n}
    </span>
  );
}
