"use client";

import { useQuery } from "@tanstack/react-query";
import { Clock, Webhook } from "lucide-react";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";

/**
 * Where the diagram starts, what starts it: a chip at the canvas's top left
 * naming the workflow's schedules (with the next fire, in the viewer's zone)
 * and webhooks, opening the Triggers drawer. Nothing is shown for a workflow
 * without triggers, so a plain diagram stays plain.
 */
export function StartTriggers({ namespace, workflowName, onOpen }: { namespace: string; workflowName: string; onOpen: () => void }) {
  const trpc = useTRPC();
  const hydrated = useHydrated();
  const schedules = useQuery({ ...trpc.schedules.list.queryOptions({ namespace, workflowName }), refetchInterval: 30_000 });
  const webhooks = useQuery(trpc.webhooks.list.queryOptions({ namespace, workflowName }));
  const active = (schedules.data ?? []).filter((s) => !s.paused);
  const hooks = (webhooks.data ?? []).filter((w) => w.enabled);
  if (active.length === 0 && hooks.length === 0) return null;
  const next = active
    .map((s) => s.nextFireTimes[0])
    .filter((t): t is string => t !== undefined)
    .sort()[0];
  const nextText = next === undefined || !hydrated ? null : new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(new Date(next));
  return (
    <button
      aria-label="Triggers of this workflow"
      className="absolute top-3 left-3 z-10 flex items-center gap-3 rounded-full border border-separator bg-surface px-3 py-1 text-xs shadow-sm hover:border-accent"
      data-testid="start-triggers"
      type="button"
      onClick={onOpen}
    >
      <span className="font-medium text-muted">Starts on</span>
      {active.length > 0 ? (
        <span className="flex items-center gap-1" title={active.map((s) => `${s.name}: ${s.cronExpression} (${s.zoneId})`).join("\n")}>
          <Clock aria-hidden className="size-3.5" />
          {active.length === 1 ? active[0]!.name : `${active.length} schedules`}
          {nextText !== null ? <span className="text-muted">· next {nextText}</span> : null}
        </span>
      ) : null}
      {hooks.length > 0 ? (
        <span className="flex items-center gap-1" title={hooks.map((w) => w.path).join("\n")}>
          <Webhook aria-hidden className="size-3.5" />
          {hooks.length === 1 ? hooks[0]!.name : `${hooks.length} webhooks`}
        </span>
      ) : null}
    </button>
  );
}
