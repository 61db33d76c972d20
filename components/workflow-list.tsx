"use client";

import { Alert, Button, Chip, Dropdown, SearchField, Tooltip, buttonVariants } from "@heroui/react";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { LayoutTemplate, Upload } from "lucide-react";
import type { Route } from "next";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useDeferredValue, useMemo, useState } from "react";
import type { ReactNode } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { RunStatusChip } from "./executions/run-status-chip";
import { pluralize } from "./format";
import { MoreIcon, PlusIcon, RefreshIcon } from "./icons";
import { WorkflowCanvasIllustration } from "./illustrations";
import { RelativeTime } from "./relative-time";
import { useConsoleSession } from "./console-session";
import { NoNamespacePanel } from "./no-namespace-panel";
import { useTRPC } from "./trpc";
import { ConfirmDialog } from "./ui/confirm-dialog";
import { DataTable } from "./ui/data-table";
import type { DataTableColumn } from "./ui/data-table";
import { EmptyState, EmptyStatePanel } from "./ui/empty-state";
import { SkeletonRows } from "./ui/skeleton-rows";
import type { SkeletonCell } from "./ui/skeleton-rows";
import { ImportWorkflowDialog } from "./workflows/import-workflow-dialog";
import { TemplateGalleryDialog } from "./workflows/template-gallery-dialog";

type WorkflowSummary = inferRouterOutputs<AppRouter>["workflows"]["list"][number];

const WORKFLOW_SKELETON: readonly SkeletonCell[] = [
  { kind: "lines", detailWidth: "w-64" },
  { kind: "pill", width: "w-10" },
  { kind: "bar", hiddenBelow: "sm" },
];

/** The workflows of the namespace the console is showing (the switcher's choice). */
export function CurrentNamespaceWorkflowList() {
  const { namespace, role } = useConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  // Keyed: a search typed in one namespace does not carry over to the next.
  // Creating, importing and deleting need the edit permission (editor and up);
  // the server checks it again, this only spares a viewer buttons that would be refused.
  return <WorkflowList key={namespace} canEdit={role === "editor" || role === "admin"} namespace={namespace} />;
}

/** Links styled as buttons: navigation stays a real link (middle-click, open in new tab). */
function NewWorkflowLink({ variant = "primary" }: { variant?: "primary" | "secondary" }) {
  return (
    <Link className={buttonVariants({ size: "sm", variant })} href="/workflows/new">
      <PlusIcon className="size-4" />
      New workflow
    </Link>
  );
}

function TemplatesButton({ onPress }: { onPress: () => void }) {
  return (
    <Button size="sm" variant="secondary" onPress={onPress}>
      <LayoutTemplate aria-hidden="true" className="size-4" />
      New from template
    </Button>
  );
}

function ImportButton({ onPress }: { onPress: () => void }) {
  return (
    <Button size="sm" variant="secondary" onPress={onPress}>
      <Upload aria-hidden="true" className="size-4" />
      Import
    </Button>
  );
}

export function WorkflowList({ namespace, canEdit = false }: { namespace: string; canEdit?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [search, setSearch] = useState("");
  const [importing, setImporting] = useState(false);
  const [choosingTemplate, setChoosingTemplate] = useState(false);
  const [deleting, setDeleting] = useState<WorkflowSummary | null>(null);
  // Typing stays responsive; the query follows the deferred value.
  const term = useDeferredValue(search.trim());
  const input = term ? { namespace, search: term } : { namespace };
  const list = useQuery({ ...trpc.workflows.list.queryOptions(input), placeholderData: keepPreviousData });
  // Every name, not only the ones a search shows: the import dialog says when a name is taken.
  const all = useQuery({ ...trpc.workflows.list.queryOptions({ namespace }), enabled: importing });
  const existing = useMemo(() => new Map((all.data ?? []).map((w) => [w.name, w.latestVersion])), [all.data]);
  const remove = useMutation(
    trpc.workflows.delete.mutationOptions({
      onSuccess: async () => {
        setDeleting(null);
        await queryClient.invalidateQueries(trpc.workflows.list.pathFilter());
      },
    }),
  );

  const dialogs = (
    <>
      <ImportWorkflowDialog existing={existing} isOpen={importing} namespace={namespace} onOpenChange={setImporting} />
      <TemplateGalleryDialog isOpen={choosingTemplate} onOpenChange={setChoosingTemplate} />
      <ConfirmDialog
        confirmLabel="Delete workflow"
        error={remove.error?.message ?? null}
        isOpen={deleting !== null}
        isPending={remove.isPending}
        pendingLabel="Deleting…"
        title={`Delete “${deleting?.name ?? ""}”?`}
        onConfirm={() => deleting && remove.mutate({ namespace, name: deleting.name })}
        onOpenChange={(open) => (open ? undefined : setDeleting(null))}
      >
        <p>
          It leaves this list and can no longer be started by name. Its {deleting ? pluralize(deleting.versionCount, "version") : "versions"} and
          past runs are kept: runs still show the version they ran, and saving a workflow with this name again starts a new version.
        </p>
      </ConfirmDialog>
    </>
  );

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

  if (list.isPending) return <SkeletonRows cells={WORKFLOW_SKELETON} framed label="Loading workflows" />;

  const rows = list.data;
  if (rows.length === 0 && !term && !search) {
    return (
      <>
        <EmptyStatePanel
          action={
            canEdit ? (
              <div className="flex flex-wrap justify-center gap-2">
                <NewWorkflowLink />
                <TemplatesButton onPress={() => setChoosingTemplate(true)} />
                <ImportButton onPress={() => setImporting(true)} />
              </div>
            ) : null
          }
          illustration={<WorkflowCanvasIllustration />}
          title="No workflows yet"
        >
          {canEdit ? (
            <>
              Design one on the canvas, or import a node-flow or Conductor WorkflowDef JSON file. Workflows in the{" "}
              <span className="font-medium text-foreground">{namespace}</span> namespace are listed here with their latest version and last run.
            </>
          ) : (
            <>
              Workflows in the <span className="font-medium text-foreground">{namespace}</span> namespace are listed here once an editor saves the
              first one.
            </>
          )}
        </EmptyStatePanel>
        {dialogs}
      </>
    );
  }

  return (
    <div className="flex flex-col gap-4">
      {/* On a phone the buttons wrap under the search rather than squeezing it. */}
      <div className="flex flex-wrap items-center gap-2">
        <SearchField aria-label="Search workflows" className="min-w-0 flex-1 basis-48 sm:max-w-xs" value={search} onChange={setSearch}>
          <SearchField.Group>
            <SearchField.SearchIcon />
            <SearchField.Input placeholder="Search workflows" />
            <SearchField.ClearButton />
          </SearchField.Group>
        </SearchField>
        <Tooltip delay={400}>
          <Button
            aria-label="Refresh"
            className="shrink-0"
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
        {canEdit ? (
          <div className="ml-auto flex shrink-0 items-center gap-2">
            <ImportButton onPress={() => setImporting(true)} />
            <TemplatesButton onPress={() => setChoosingTemplate(true)} />
            <NewWorkflowLink />
          </div>
        ) : null}
      </div>

      <WorkflowTable
        empty={
          <EmptyState
            action={
              <Button size="sm" variant="secondary" onPress={() => setSearch("")}>
                Clear search
              </Button>
            }
            framed
            title={`No workflows match “${term || search}”`}
          >
            Names and descriptions of the latest versions are searched.
          </EmptyState>
        }
        footer={term ? `${pluralize(rows.length, "match", "matches")} for “${term}”` : `${pluralize(rows.length, "workflow")} in ${namespace}`}
        rows={rows}
        onDelete={
          canEdit
            ? (row) => {
                remove.reset();
                setDeleting(row);
              }
            : undefined
        }
      />
      {dialogs}
    </div>
  );
}

function workflowHref(name: string): Route {
  return `/workflows/${encodeURIComponent(name)}` as Route;
}

function LastRun({ run, compact = false }: { run: WorkflowSummary["lastRun"]; compact?: boolean }) {
  if (!run) return <span className="text-[13px] text-muted">{compact ? "Never run" : "Never"}</span>;
  return (
    <Link
      aria-label={`Last run: ${run.status.toLowerCase().replace("_", " ")}`}
      className="inline-flex items-center gap-2 rounded-md outline-none focus-visible:ring-2 focus-visible:ring-focus"
      href={`/executions/${run.id}` as Route}
    >
      <RunStatusChip status={run.status} />
      <RelativeTime className="text-[13px] whitespace-nowrap text-muted" iso={run.startedAt} />
    </Link>
  );
}

function VersionChip({ version }: { version: number }) {
  return (
    <Chip color="accent" size="sm" variant="soft">
      v{version}
    </Chip>
  );
}

function WorkflowTable({
  rows,
  empty,
  footer,
  onDelete,
}: {
  rows: WorkflowSummary[];
  empty: ReactNode;
  footer: string;
  onDelete?: (row: WorkflowSummary) => void;
}) {
  const router = useRouter();
  const columns: DataTableColumn<WorkflowSummary>[] = [
    {
      id: "name",
      header: "Name",
      isRowHeader: true,
      cell: (row) => (
        <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
          <span className="flex min-w-0 items-center gap-2">
            <Link
              // Wraps anywhere rather than truncating: a table cell grows to fit its content, so truncation would push the actions off a phone screen.
              className="min-w-0 rounded-sm font-medium [overflow-wrap:anywhere] text-foreground underline-offset-2 outline-none hover:underline focus-visible:ring-2 focus-visible:ring-focus"
              href={workflowHref(row.name)}
            >
              {row.name}
            </Link>
            {/* On a phone the version rides next to the name instead of taking a column. */}
            <span className="shrink-0 sm:hidden">
              <VersionChip version={row.latestVersion} />
            </span>
          </span>
          <span className="line-clamp-2 text-[13px] [overflow-wrap:anywhere] text-muted sm:line-clamp-1">
            {row.description ?? <span className="italic">No description</span>}
          </span>
          {/* Narrow screens fold the last run and the update time into this cell. */}
          <span className="mt-1 flex flex-wrap items-center gap-x-3 gap-y-1 md:hidden">
            <LastRun compact run={row.lastRun} />
            <span className="text-[13px] text-muted sm:hidden">
              Updated <RelativeTime iso={row.updatedAt} />
            </span>
          </span>
        </div>
      ),
    },
    {
      id: "version",
      header: "Version",
      hiddenBelow: "sm",
      className: "w-36",
      cell: (row) => (
        <div className="flex items-center gap-2">
          <VersionChip version={row.latestVersion} />
          {row.versionCount > 1 ? <span className="text-xs whitespace-nowrap text-muted">of {row.versionCount}</span> : null}
        </div>
      ),
    },
    { id: "last-run", header: "Last run", hiddenBelow: "md", className: "w-52", cell: (row) => <LastRun run={row.lastRun} /> },
    {
      id: "updated",
      header: "Updated",
      hiddenBelow: "sm",
      className: "w-36",
      cell: (row) => <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={row.updatedAt} />,
    },
    {
      id: "actions",
      header: "Actions",
      headerHidden: true,
      className: "w-14",
      cell: (row) => (
        <div className="flex justify-end">
          <Dropdown>
            <Button aria-label={`Actions for ${row.name}`} isIconOnly size="sm" variant="ghost">
              <MoreIcon className="size-4" />
            </Button>
            <Dropdown.Popover placement="bottom end">
              <Dropdown.Menu
                aria-label={`Actions for ${row.name}`}
                disabledKeys={onDelete ? [] : ["delete"]}
                onAction={(action) => {
                  // Menu items navigate through the router: no RouterProvider is set up for HeroUI's hrefs.
                  if (action === "open") router.push(workflowHref(row.name));
                  else if (action === "last-run" && row.lastRun) router.push(`/executions/${row.lastRun.id}` as Route);
                  else if (action === "delete") onDelete?.(row);
                }}
              >
                <Dropdown.Item id="open" textValue="Open in the editor">
                  Open in the editor
                </Dropdown.Item>
                {row.lastRun ? (
                  <Dropdown.Item id="last-run" textValue="Open the last run">
                    Open the last run
                  </Dropdown.Item>
                ) : null}
                <Dropdown.Item id="delete" textValue="Delete" variant="danger">
                  Delete…
                </Dropdown.Item>
              </Dropdown.Menu>
            </Dropdown.Popover>
          </Dropdown>
        </div>
      ),
    },
  ];
  return (
    <DataTable
      columns={columns}
      empty={empty}
      footer={footer}
      label="Workflow definitions"
      loadingLabel="Loading workflows"
      rowKey={(row) => row.id}
      rows={rows}
      standalone
    />
  );
}
