"use client";

import { Alert, Button, Card, Chip, Skeleton } from "@heroui/react";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { DatabaseIcon } from "./icons";
import { useTRPC } from "./trpc";

/** Settings → System: read live through `system.status`, never cached at build time. */
export function SystemPanel() {
  const trpc = useTRPC();
  const status = useQuery(trpc.system.status.queryOptions());

  return (
    <Card aria-labelledby="system-heading" className="gap-0 p-0" role="region">
      <div className="flex items-start gap-3 border-b border-separator px-5 py-4">
        <span className="mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-lg bg-accent-soft text-accent">
          <DatabaseIcon className="size-[18px]" />
        </span>
        <div className="min-w-0 flex-1">
          <h2 className="text-base font-semibold tracking-tight text-foreground" id="system-heading">
            System
          </h2>
          <p className="text-sm text-muted">Read live from the database this web process is connected to.</p>
        </div>
        {status.data ? (
          <Button isDisabled={status.isFetching} size="sm" variant="ghost" onPress={() => void status.refetch()}>
            {status.isFetching ? "Checking…" : "Recheck"}
          </Button>
        ) : null}
      </div>

      {status.isError && !status.data ? (
        <div className="p-5">
          <Alert status="danger">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>System status could not be read</Alert.Title>
              <Alert.Description>{status.error.message}</Alert.Description>
            </Alert.Content>
            <Button size="sm" variant="danger-soft" onPress={() => void status.refetch()}>
              Try again
            </Button>
          </Alert>
        </div>
      ) : status.isPending ? (
        <dl className="grid sm:grid-cols-2">
          {["PostgreSQL", "Database", "Applied migrations", "Pending migrations", "Unknown migrations", "Process roles"].map((label) => (
            <Row key={label} label={label}>
              <Skeleton className="h-4 w-28 rounded-md" />
            </Row>
          ))}
        </dl>
      ) : (
        <dl className="grid sm:grid-cols-2">
          <Row label="PostgreSQL">
            <span className="font-medium">PostgreSQL {status.data.postgres.version}</span>
            {status.data.postgres.supported ? (
              <Chip color="success" size="sm" variant="soft">
                Supported
              </Chip>
            ) : (
              <Chip color="danger" size="sm" variant="soft">
                Needs 18 or newer
              </Chip>
            )}
          </Row>
          <Row label="Database">
            <code className="font-mono text-[13px]">{status.data.postgres.database}</code>
          </Row>
          <Row label="Applied migrations">
            <span className="font-medium tabular-nums">{status.data.migrations.applied}</span>
          </Row>
          <Row label="Pending migrations">
            <MigrationCount
              names={status.data.migrations.pending}
              problem="Run `nf migrate`: this build expects these and the database lacks them."
              tone="warning"
            />
          </Row>
          <Row label="Unknown migrations">
            <MigrationCount
              names={status.data.migrations.unknown}
              okLabel="None"
              problem="The database was migrated by a newer build than this one."
              tone="danger"
            />
          </Row>
          {status.data.migrations.changed.length > 0 ? (
            <Row label="Changed migrations">
              <MigrationCount
                names={status.data.migrations.changed}
                problem="Applied files whose contents changed since; migrations are forward-only."
                tone="warning"
              />
            </Row>
          ) : null}
          <Row label="Process roles">
            <div className="flex flex-wrap gap-1.5">
              {status.data.roles.map((role) => (
                <Chip key={role} size="sm" variant="secondary">
                  {role}
                </Chip>
              ))}
            </div>
          </Row>
          <Row label="Node.js">
            <code className="font-mono text-[13px]">{status.data.nodeVersion}</code>
          </Row>
        </dl>
      )}
    </Card>
  );
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-1 border-b border-separator px-5 py-3.5 last:border-b-0 sm:[&:nth-last-child(2):nth-child(odd)]:border-b-0">
      <dt className="text-xs font-medium text-muted">{label}</dt>
      <dd className="flex min-h-6 flex-wrap items-center gap-2 text-sm text-foreground">{children}</dd>
    </div>
  );
}

function MigrationCount({
  names,
  problem,
  tone,
  okLabel = "Up to date",
}: {
  names: string[];
  problem: string;
  tone: "warning" | "danger";
  okLabel?: string;
}) {
  if (names.length === 0) {
    return (
      <>
        <span className="font-medium tabular-nums">0</span>
        <Chip color="success" size="sm" variant="soft">
          {okLabel}
        </Chip>
      </>
    );
  }
  return (
    <div className="flex flex-col gap-1.5">
      <div className="flex items-center gap-2">
        <span className="font-medium tabular-nums">{names.length}</span>
        <Chip color={tone} size="sm" variant="soft">
          {tone === "danger" ? "Not ready" : "Needs attention"}
        </Chip>
      </div>
      <ul className="flex flex-col gap-0.5">
        {names.map((name) => (
          <li key={name}>
            <code className="font-mono text-xs">{name}</code>
          </li>
        ))}
      </ul>
      <p className="text-xs text-muted">{problem}</p>
    </div>
  );
}
