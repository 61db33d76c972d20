"use client";

import { Button, Chip, Skeleton } from "@heroui/react";
import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { Route } from "next";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useNamespace } from "../console-session";
import { EmptyStatePanel } from "../ui/empty-state";
import { InboxIllustration } from "../illustrations";
import { NoNamespacePanel } from "../no-namespace-panel";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";
import type { InboxTabId } from "./inbox-model";
import { INBOX_TABS, dueText, isInboxTab, statusLabel } from "./inbox-model";
import { TaskDetail } from "./task-detail";

export type HumanTaskItem = inferRouterOutputs<AppRouter>["humanTasks"]["inbox"]["items"][number];

const PAGE_SIZE = 50;

/** The inbox of the namespace the console shows. */
export function CurrentNamespaceInbox() {
  const namespace = useNamespace();
  if (!namespace) return <NoNamespacePanel />;
  return <InboxView key={namespace} namespace={namespace} />;
}

/**
 * Tabs of open tasks (mine, my groups', unclaimed) and the closed ones, each
 * sorted by due date with the overdue marked; the selected task beside the
 * list from `md` up, instead of it below (list, then detail, on a phone). The
 * tab and the task are in the URL, so a task can be linked to and the back
 * button goes back to the list.
 */
export function InboxView({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const tabParam = params.get("tab");
  const taskId = params.get("task");
  const counts = useQuery(trpc.humanTasks.counts.queryOptions({ namespace }));

  // Without a tab in the URL, open the first one that has something in it.
  const [chosen, setChosen] = useState<InboxTabId | null>(null);
  const fallback: InboxTabId = counts.data ? (counts.data.mine > 0 ? "mine" : counts.data.groups > 0 ? "groups" : counts.data.unclaimed > 0 ? "unclaimed" : "mine") : "mine";
  const tab: InboxTabId = isInboxTab(tabParam) ? tabParam : (chosen ?? fallback);
  useEffect(() => {
    if (!isInboxTab(tabParam) && chosen === null && counts.data) setChosen(fallback);
  }, [tabParam, chosen, counts.data, fallback]);

  const href = (next: { tab?: InboxTabId; task?: string | null }): Route => {
    const q = new URLSearchParams();
    q.set("tab", next.tab ?? tab);
    const t = next.task === undefined ? taskId : next.task;
    if (t) q.set("task", t);
    return `${pathname}?${q.toString()}` as Route;
  };

  const def = INBOX_TABS.find((t) => t.id === tab) ?? INBOX_TABS[0];
  const list = useInfiniteQuery(
    trpc.humanTasks.inbox.infiniteQueryOptions(
      { namespace, view: def.view, state: def.state, limit: PAGE_SIZE },
      { getNextPageParam: (last) => last.nextCursor, placeholderData: keepPreviousData },
    ),
  );
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];

  const countOf = (id: InboxTabId): number | undefined => (id === "closed" ? undefined : counts.data?.[id]);

  return (
    <div className="flex min-w-0 flex-col gap-4">
      <div aria-label="Inbox views" className="-mx-1 flex min-w-0 gap-1 overflow-x-auto border-b border-separator px-1" role="tablist">
        {INBOX_TABS.map((t) => {
          const n = countOf(t.id);
          return (
            <button
              key={t.id}
              aria-controls="inbox-list"
              aria-selected={tab === t.id}
              className={`-mb-px flex shrink-0 items-center gap-1.5 border-b-2 px-2.5 py-2 text-sm font-medium whitespace-nowrap sm:px-3 ${tab === t.id ? "border-accent text-foreground" : "border-transparent text-muted hover:text-foreground"}`}
              role="tab"
              type="button"
              onClick={() => {
                setChosen(t.id);
                router.replace(href({ tab: t.id, task: null }), { scroll: false });
              }}
            >
              {/* Four tabs fit a 390 px phone only with the short names; the hidden one is not part of the name. */}
              <span className="sm:hidden">{t.short}</span>
              <span className="hidden sm:inline">{t.label}</span>
              {n !== undefined ? (
                <span className={`rounded-full px-1.5 text-[11px] ${n > 0 ? "bg-accent-soft text-accent-soft-foreground" : "bg-default text-muted"}`} data-testid={`count-${t.id}`}>
                  {n}
                </span>
              ) : null}
            </button>
          );
        })}
        {counts.data && counts.data.overdue > 0 ? (
          <Chip className="my-auto ml-auto hidden shrink-0 sm:flex" color="danger" size="sm" variant="soft">
            {counts.data.overdue} overdue
          </Chip>
        ) : null}
      </div>

      <div className="grid min-w-0 gap-6 md:grid-cols-[minmax(0,20rem)_minmax(0,1fr)] lg:grid-cols-[minmax(0,24rem)_minmax(0,1fr)]">
        <section aria-label={def.label} className={`min-w-0 ${taskId ? "hidden md:block" : ""}`} id="inbox-list" role="tabpanel">
          {list.isPending ? (
            <div className="flex flex-col gap-2">
              <Skeleton className="h-20 rounded-xl" />
              <Skeleton className="h-20 rounded-xl" />
            </div>
          ) : list.error ? (
            <p className="text-sm text-danger">{list.error.message}</p>
          ) : items.length === 0 ? (
            <EmptyStatePanel illustration={<InboxIllustration />} title={tab === "closed" ? "Nothing closed yet" : "Nothing waiting here"}>
              {tab === "mine"
                ? "Tasks assigned to you, and those you claimed, land here."
                : tab === "groups"
                  ? "Tasks for a group you are in land here."
                  : tab === "unclaimed"
                    ? "Tasks for anyone in the namespace, or for your role, wait here until someone claims them."
                    : "Completed, cancelled and expired tasks are listed here."}
            </EmptyStatePanel>
          ) : (
            <ul aria-label="Tasks" className="flex flex-col gap-2">
              {items.map((item) => (
                <li key={item.id}>
                  <TaskRow href={href({ task: item.id })} item={item} selected={item.id === taskId} />
                </li>
              ))}
            </ul>
          )}
          {list.hasNextPage ? (
            <Button className="mt-3" isPending={list.isFetchingNextPage} size="sm" variant="secondary" onPress={() => void list.fetchNextPage()}>
              Load more
            </Button>
          ) : null}
        </section>

        <section aria-label="Task" className={`min-w-0 ${taskId ? "" : "hidden md:block"}`}>
          {taskId ? (
            <TaskDetail key={taskId} backHref={href({ task: null })} id={taskId} namespace={namespace} />
          ) : (
            <div className="hidden h-full min-h-64 items-center justify-center rounded-xl border border-dashed border-separator p-8 text-center text-sm text-muted md:flex">
              Choose a task to see its form.
            </div>
          )}
        </section>
      </div>
    </div>
  );
}

function TaskRow({ item, href, selected }: { item: HumanTaskItem; href: Route; selected: boolean }) {
  const hydrated = useHydrated();
  const due = hydrated ? dueText(item.dueAt, item.overdue, new Date()) : null;
  return (
    <Link
      aria-current={selected ? "true" : undefined}
      className={`flex min-w-0 flex-col gap-1 rounded-xl border px-3 py-2.5 outline-none transition-colors focus-visible:ring-2 focus-visible:ring-focus ${selected ? "border-accent bg-accent-soft/40" : item.overdue ? "border-danger/50 bg-surface hover:bg-default" : "border-separator bg-surface hover:bg-default"}`}
      data-overdue={item.overdue || undefined}
      data-task-id={item.id}
      href={href}
      scroll={false}
    >
      <div className="flex min-w-0 items-start gap-2">
        <span className="min-w-0 flex-1 font-medium break-words text-foreground">{item.title}</span>
        {item.overdue ? (
          <Chip className="shrink-0" color="danger" size="sm" variant="soft">
            Overdue
          </Chip>
        ) : item.status !== "PENDING" ? (
          <Chip className="shrink-0" size="sm" variant="secondary">
            {statusLabel(item.status)}
          </Chip>
        ) : null}
      </div>
      <p className="truncate text-xs text-muted">
        {item.workflowName} · {item.refName}
      </p>
      <p className="flex min-w-0 flex-wrap gap-x-2 text-xs text-muted">
        <span>For {item.assignee.label}</span>
        {item.claimedBy ? <span>· claimed by {item.claimedBy.email}</span> : null}
        {item.approvalsRequired > 1 ? (
          <span>
            · {item.approvalsGiven}/{item.approvalsRequired} approvals
          </span>
        ) : null}
      </p>
      <p className={`text-xs ${item.overdue ? "font-medium text-danger" : "text-muted"}`}>
        {due ?? (
          <>
            Opened <RelativeTime iso={item.createdAt} />
          </>
        )}
      </p>
    </Link>
  );
}
