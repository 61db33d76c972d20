"use client";

import { Button, Chip, CloseButton, Label, ListBox, Select, ToggleButton, ToggleButtonGroup, Tooltip } from "@heroui/react";
import { keepPreviousData, skipToken, useInfiniteQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { Key, ReactNode } from "react";
import { useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { useConsoleSession } from "../console-session";
import { pluralize } from "../format";
import { RefreshIcon, ShieldIcon } from "../icons";
import { NoNamespacePanel } from "../no-namespace-panel";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { DataTable } from "../ui/data-table";
import type { DataTableColumn } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import type { SkeletonCell } from "../ui/skeleton-rows";
import { ACTION_FILTERS, actionLabel, actionTone, actorLabel, resourceLabel, summarizeDetails } from "./audit-display";
import type { AuditScope } from "./audit-display";
import { LoadError, NotPermitted, SectionCard } from "./section-card";

type AuditEvent = inferRouterOutputs<AppRouter>["audit"]["list"]["items"][number];
type ActorFilter = { type: AuditEvent["actor"]["type"]; id: string; label: string };

const PAGE_SIZE = 50;

const AUDIT_SKELETON: readonly SkeletonCell[] = [
  { kind: "lines", width: "w-44", detailWidth: "w-32" },
  { kind: "bar", width: "w-36", hiddenBelow: "sm" },
  { kind: "bar", width: "w-28", hiddenBelow: "md" },
  { kind: "bar", width: "w-16" },
];

/**
 * Settings → Audit for the namespace in the switcher, for an admin there. An
 * owner can switch to the instance's own events (sign-ins, users), which
 * belong to no namespace.
 */
export function CurrentNamespaceAuditLog() {
  const { namespace, role, user } = useConsoleSession();
  const [scope, setScope] = useState<AuditScope>("namespace");
  const shown: AuditScope = user.isOwner && (scope === "instance" || !namespace) ? "instance" : "namespace";

  if (!user.isOwner) {
    if (!namespace) return <NoNamespacePanel />;
    if (role !== "admin") {
      return (
        <NotPermitted title={`Only an admin of ${namespace} reads its audit log`}>
          Your role here is {role ?? "none"}. Switch to a namespace where you are an admin, or ask one.
        </NotPermitted>
      );
    }
  }

  const scopeSwitch = user.isOwner ? (
    <ToggleButtonGroup
      aria-label="Whose events"
      disallowEmptySelection
      selectedKeys={[shown]}
      selectionMode="single"
      size="sm"
      onSelectionChange={(keys) => {
        const [next] = [...keys];
        if (next === "namespace" || next === "instance") setScope(next);
      }}
    >
      {namespace ? (
        <ToggleButton className="max-w-48" id="namespace">
          <span className="truncate">{namespace}</span>
        </ToggleButton>
      ) : null}
      <ToggleButton id="instance">Instance</ToggleButton>
    </ToggleButtonGroup>
  ) : null;

  // Keyed: filters and loaded pages of one log do not carry over to another.
  return shown === "instance" || !namespace ? (
    <AuditLogPanel key="instance" scope={{ kind: "instance" }} scopeSwitch={scopeSwitch} />
  ) : (
    <AuditLogPanel key={`ns:${namespace}`} scope={{ kind: "namespace", namespace }} scopeSwitch={scopeSwitch} />
  );
}

/** One audit log, newest first, a page at a time: a namespace's, or the instance's (owners only). */
export function AuditLogPanel({
  scope,
  scopeSwitch,
}: {
  scope: { kind: "namespace"; namespace: string } | { kind: "instance" };
  /** The owner's namespace/instance switch, shown among the filters. */
  scopeSwitch?: ReactNode;
}) {
  const trpc = useTRPC();
  const [filterId, setFilterId] = useState("all");
  const [actor, setActor] = useState<ActorFilter | null>(null);
  const kind: AuditScope = scope.kind;
  const filters = ACTION_FILTERS.filter((f) => f.scopes.includes(kind));
  const prefix = filters.find((f) => f.id === filterId)?.prefix ?? "";
  const common = {
    limit: PAGE_SIZE,
    ...(prefix ? { actionPrefix: prefix } : {}),
    ...(actor ? { actor: { type: actor.type, id: actor.id } } : {}),
  };
  const pageOptions = {
    getNextPageParam: (last: { nextCursor: string | null }) => last.nextCursor,
    // A changed filter keeps the old rows on screen until the new first page arrives.
    placeholderData: keepPreviousData,
  };
  // One of the two runs; the other is skipped (hooks cannot be called conditionally).
  const namespaceLog = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(scope.kind === "namespace" ? { namespace: scope.namespace, ...common } : skipToken, pageOptions),
  );
  const instanceLog = useInfiniteQuery(trpc.audit.listInstance.infiniteQueryOptions(scope.kind === "instance" ? common : skipToken, pageOptions));
  const log = scope.kind === "namespace" ? namespaceLog : instanceLog;
  const events = log.data?.pages.flatMap((page) => page.items) ?? [];
  const filtered = prefix !== "" || actor !== null;
  const where = scope.kind === "namespace" ? scope.namespace : "this instance";

  return (
    <SectionCard
      actions={
        <Tooltip delay={400}>
          <Button aria-label="Refresh" isDisabled={log.isFetching} isIconOnly size="sm" variant="ghost" onPress={() => void log.refetch()}>
            <RefreshIcon className={`size-4 ${log.isFetching ? "animate-spin" : ""}`} />
          </Button>
          <Tooltip.Content>Refresh</Tooltip.Content>
        </Tooltip>
      }
      description={
        scope.kind === "namespace" ? (
          <>
            Who changed what in <span className="font-medium text-foreground">{scope.namespace}</span>: definitions, runs, keys, members and
            groups. Records are never edited or deleted.
          </>
        ) : (
          "Sign-ins, failed sign-ins and user changes, which belong to no namespace. Records are never edited or deleted."
        )
      }
      icon={<ShieldIcon className="size-[18px]" />}
      id="audit-log"
      title="Audit log"
    >
      <div className="flex flex-col gap-3 border-b border-separator px-5 py-3 sm:flex-row sm:flex-wrap sm:items-center">
        {scopeSwitch}
        <Select
          aria-label="Filter by action"
          className="w-full sm:w-56"
          value={filterId}
          onChange={(key: Key | null) => {
            if (typeof key === "string") setFilterId(key);
          }}
        >
          <Select.Trigger>
            <Select.Value />
            <Select.Indicator />
          </Select.Trigger>
          <Select.Popover>
            <ListBox>
              {filters.map((filter) => (
                <ListBox.Item key={filter.id} id={filter.id} textValue={filter.label}>
                  <Label>{filter.label}</Label>
                  <ListBox.ItemIndicator />
                </ListBox.Item>
              ))}
            </ListBox>
          </Select.Popover>
        </Select>
        {actor ? (
          <span className="flex min-w-0 items-center gap-1">
            <Chip className="min-w-0" size="sm" variant="soft">
              <span className="truncate">By {actor.label}</span>
            </Chip>
            <CloseButton aria-label="Show every actor" onPress={() => setActor(null)} />
          </span>
        ) : (
          <span className="hidden text-xs text-muted sm:inline">Select who acted to see only theirs.</span>
        )}
      </div>

      {log.isError && !log.data ? (
        <LoadError message={log.error.message} what="The audit log" onRetry={() => void log.refetch()} />
      ) : (
        <AuditTable
          empty={
            <EmptyState
              action={
                filtered ? (
                  <Button
                    size="sm"
                    variant="secondary"
                    onPress={() => {
                      setFilterId("all");
                      setActor(null);
                    }}
                  >
                    Clear filters
                  </Button>
                ) : null
              }
              title={filtered ? "No events match these filters" : `Nothing recorded in ${where} yet`}
            >
              {filtered ? "Older events may match: the filters apply to the whole log." : "Changes appear here as soon as they are made."}
            </EmptyState>
          }
          events={log.data ? events : undefined}
          footer={
            <>
              {log.hasNextPage ? `The newest ${pluralize(events.length, "event")}` : `All ${pluralize(events.length, "event")}`}
              {filtered ? " matching the filters" : ""}
            </>
          }
          footerAction={
            log.hasNextPage ? (
              <Button isDisabled={log.isFetchingNextPage} size="sm" variant="secondary" onPress={() => void log.fetchNextPage()}>
                {log.isFetchingNextPage ? "Loading…" : "Load older events"}
              </Button>
            ) : null
          }
          onActor={(event) => {
            if (event.actor.id === null) return;
            setActor({ type: event.actor.type, id: event.actor.id, label: actorLabel(event.actor).primary });
          }}
        />
      )}
    </SectionCard>
  );
}

function ActorCell({ event, onActor }: { event: AuditEvent; onActor: (event: AuditEvent) => void }) {
  const label = actorLabel(event.actor);
  return (
    <div className="flex min-w-0 flex-col">
      {event.actor.id === null ? (
        <span className="truncate text-sm text-foreground">{label.primary}</span>
      ) : (
        <button
          className="truncate rounded-sm text-left text-sm text-foreground outline-none hover:underline focus-visible:ring-2 focus-visible:ring-focus"
          title={`Only events by ${label.primary}`}
          type="button"
          onClick={() => onActor(event)}
        >
          {label.primary}
        </button>
      )}
      {label.secondary || event.ipAddress ? (
        <span className="truncate text-xs text-muted">{[label.secondary, event.ipAddress].filter(Boolean).join(" · ")}</span>
      ) : null}
    </div>
  );
}

/** What the event is about, then its details on up to two lines (the whole object on hover). */
function ResourceAndDetails({ event, className }: { event: AuditEvent; className?: string }) {
  const resource = resourceLabel(event.resourceType, event.resourceId);
  const details = summarizeDetails(event.details);
  // {name} of a definition repeats the resource it is about.
  const shownDetails = details === event.resourceId ? "" : details;
  return (
    <div className={`flex min-w-0 flex-col gap-0.5 ${className ?? ""}`}>
      {resource ? (
        <span className="truncate text-sm text-muted" title={event.resourceId ?? undefined}>
          {resource.kind}
          {resource.kind && resource.name ? " · " : ""}
          <span className="font-medium text-foreground">{resource.name}</span>
        </span>
      ) : null}
      {shownDetails ? (
        <span className="line-clamp-2 text-xs break-words text-muted" title={JSON.stringify(event.details, null, 2)}>
          {shownDetails}
        </span>
      ) : null}
      {!resource && !shownDetails ? <span className="text-sm text-muted">—</span> : null}
    </div>
  );
}

function AuditTable({
  events,
  empty,
  footer,
  footerAction,
  onActor,
}: {
  events: AuditEvent[] | undefined;
  empty: ReactNode;
  footer: ReactNode;
  footerAction: ReactNode;
  onActor: (event: AuditEvent) => void;
}) {
  const columns: DataTableColumn<AuditEvent>[] = [
    {
      id: "action",
      header: "Action",
      isRowHeader: true,
      cell: (event) => (
        <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
          <span className={`truncate text-sm font-medium ${actionTone(event.action) === "danger" ? "text-danger" : "text-foreground"}`}>
            {actionLabel(event.action)}
          </span>
          <code className="truncate font-mono text-xs text-muted">{event.action}</code>
          {/* Narrower screens fold the other columns into this cell. */}
          <div className="mt-1 flex min-w-0 flex-col gap-1 md:hidden">
            <span className="sm:hidden">
              <ActorCell event={event} onActor={onActor} />
            </span>
            <ResourceAndDetails event={event} />
          </div>
        </div>
      ),
    },
    { id: "who", header: "Who", hiddenBelow: "sm", className: "w-44 lg:w-52", cell: (event) => <ActorCell event={event} onActor={onActor} /> },
    { id: "resource", header: "Resource and details", hiddenBelow: "md", className: "w-[36%]", cell: (event) => <ResourceAndDetails event={event} /> },
    {
      id: "when",
      header: "When",
      className: "w-28 sm:w-36",
      cell: (event) => <RelativeTime className="text-sm text-muted sm:whitespace-nowrap" iso={event.at} />,
    },
  ];
  return (
    <DataTable
      columns={columns}
      empty={empty}
      fixedLayout
      footer={footer}
      footerAction={footerAction}
      label="Audit events"
      loadingLabel="Loading the audit log"
      rowKey={(event) => event.id}
      rows={events}
      skeleton={AUDIT_SKELETON}
      skeletonRows={4}
    />
  );
}
