"use client";

import { Alert, Button, Card, Chip, SearchField, Skeleton, Table, Tooltip } from "@heroui/react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useDeferredValue, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { EmptyStatePanel } from "./empty-state-panel";
import { pluralize } from "./format";
import { RefreshIcon } from "./icons";
import { WorkflowCanvasIllustration } from "./illustrations";
import { RelativeTime } from "./relative-time";
import { useNamespace } from "./console-session";
import { NoNamespacePanel } from "./no-namespace-panel";
import { useTRPC } from "./trpc";

type WorkflowSummary = inferRouterOutputs<AppRouter>["workflows"]["list"][number];

/** The workflows of the namespace the console is showing (the switcher's choice). */
export function CurrentNamespaceWorkflowList() {
  const namespace = useNamespace();
  if (!namespace) return <NoNamespacePanel />;
  // Keyed: a search typed in one namespace does not carry over to the next.
  return <WorkflowList key={namespace} namespace={namespace} />;
}

export function WorkflowList({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const [search, setSearch] = useState("");
  // Typing stays responsive; the query follows the deferred value.
  const term = useDeferredValue(search.trim());
  const input = term ? { namespace, search: term } : { namespace };
  const list = useQuery({ ...trpc.workflows.list.queryOptions(input), placeholderData: keepPreviousData });

  if (list.isError && !list.data) {
    return (
      <Alert status="danger">
        <Alert.Indicator />
        <Alert.Content>
          <Alert.Title>Workflows could not be loaded</Alert.Title>
          <Alert.Description>{list.error.message}</Alert.Description>
        </Alert.Content>
        <Button size="sm" variant="danger-soft" onPress={() => void list.refetch()}>
          Try again
        </Button>
      </Alert>
    );
  }

  if (list.isPending) return <WorkflowTableSkeleton />;

  const rows = list.data;
  if (rows.length === 0 && !term && !search) {
    return (
      <EmptyStatePanel
        illustration={<WorkflowCanvasIllustration />}
        title="No workflows yet"
        upcoming={[
          {
            title: "Design on a canvas",
            detail: "Drag tasks onto a diagram and wire them together; the diagram is the definition.",
          },
          {
            title: "Import from Conductor",
            detail: "Bring an existing Conductor WorkflowDef JSON and get the same workflow as a graph.",
          },
          {
            title: "Version every save",
            detail: "Each save is a new immutable version; runs keep the version they started on.",
          },
        ]}
      >
        Workflows in the <span className="font-medium text-foreground">{namespace}</span> namespace will be listed here,
        each with its latest version, as soon as the first definition is saved.
      </EmptyStatePanel>
    );
  }

  return (
    <div className="flex flex-col gap-4">
      <div className="flex items-center gap-2">
        <SearchField aria-label="Search workflows" className="min-w-0 flex-1 sm:max-w-xs" value={search} onChange={setSearch}>
          <SearchField.Group>
            <SearchField.SearchIcon />
            <SearchField.Input placeholder="Search workflows" />
            <SearchField.ClearButton />
          </SearchField.Group>
        </SearchField>
        <Tooltip delay={400}>
          <Button
            aria-label="Refresh"
            className="ml-auto"
            isDisabled={list.isFetching}
            isIconOnly
            size="sm"
            variant="ghost"
            onPress={() => void list.refetch()}
          >
            <RefreshIcon className={`size-4 ${list.isFetching ? "animate-spin" : ""}`} />
          </Button>
          <Tooltip.Content>Refresh</Tooltip.Content>
        </Tooltip>
      </div>

      {rows.length === 0 ? (
        <Card className="items-center py-12 text-center">
          <p className="text-sm font-medium text-foreground">No workflows match “{term || search}”</p>
          <p className="text-sm text-muted">Names and descriptions of the latest versions are searched.</p>
          <Button className="mt-2" size="sm" variant="secondary" onPress={() => setSearch("")}>
            Clear search
          </Button>
        </Card>
      ) : (
        <WorkflowTable
          footer={term ? `${pluralize(rows.length, "match", "matches")} for “${term}”` : `${pluralize(rows.length, "workflow")} in ${namespace}`}
          rows={rows}
        />
      )}
    </div>
  );
}

function VersionChip({ version }: { version: number }) {
  return (
    <Chip color="accent" size="sm" variant="soft">
      v{version}
    </Chip>
  );
}

function WorkflowTable({ rows, footer }: { rows: WorkflowSummary[]; footer: string }) {
  return (
    <Table>
      <Table.ScrollContainer>
        <Table.Content aria-label="Workflow definitions">
          <Table.Header>
            <Table.Column isRowHeader>Name</Table.Column>
            {/*
              On a phone the version rides next to the name instead of taking a
              column. It is the middle column that hides, never the last: the
              table's rounded corners are drawn on the last cell of a row.
            */}
            <Table.Column className="hidden w-36 sm:table-cell">Version</Table.Column>
            <Table.Column className="w-28 sm:w-40">Updated</Table.Column>
          </Table.Header>
          <Table.Body>
            {rows.map((row) => (
              <Table.Row key={row.id} id={row.id}>
                <Table.Cell>
                  <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
                    <span className="flex min-w-0 items-center gap-2">
                      <span className="truncate font-medium text-foreground">{row.name}</span>
                      <span className="shrink-0 sm:hidden">
                        <VersionChip version={row.latestVersion} />
                      </span>
                    </span>
                    <span className="line-clamp-2 text-[13px] text-muted sm:line-clamp-1">
                      {row.description ?? <span className="italic">No description</span>}
                    </span>
                  </div>
                </Table.Cell>
                <Table.Cell className="hidden sm:table-cell">
                  <div className="flex items-center gap-2">
                    <VersionChip version={row.latestVersion} />
                    {row.versionCount > 1 ? <span className="text-xs text-muted">of {row.versionCount}</span> : null}
                  </div>
                </Table.Cell>
                <Table.Cell>
                  <RelativeTime className="text-[13px] text-muted sm:text-sm sm:whitespace-nowrap" iso={row.updatedAt} />
                </Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Content>
      </Table.ScrollContainer>
      <Table.Footer>
        <span aria-live="polite" className="text-xs text-muted">
          {footer}
        </span>
      </Table.Footer>
    </Table>
  );
}

function WorkflowTableSkeleton() {
  return (
    <Card aria-busy="true" aria-label="Loading workflows" className="gap-4 p-5">
      {[0, 1, 2].map((i) => (
        <div key={i} className="flex items-center gap-4">
          <div className="flex flex-1 flex-col gap-2">
            <Skeleton className="h-3.5 w-40 rounded-md" />
            <Skeleton className="h-3 w-64 max-w-full rounded-md" />
          </div>
          <Skeleton className="h-5 w-10 rounded-full" />
          <Skeleton className="hidden h-3 w-20 rounded-md sm:block" />
        </div>
      ))}
    </Card>
  );
}
