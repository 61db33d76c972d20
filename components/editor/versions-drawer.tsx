"use client";

import { Alert, Chip, Drawer, Skeleton } from "@heroui/react";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";

/**
 * The version history of a workflow, newest first: open any version
 * read-only, or compare two. Versions are immutable, so this list only grows.
 */
export function VersionsDrawer({
  namespace,
  name,
  currentVersion,
  isOpen,
  onOpenChange,
}: {
  namespace: string;
  name: string;
  currentVersion: number;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const trpc = useTRPC();
  const versions = useQuery({ ...trpc.workflows.versions.queryOptions({ namespace, name }), enabled: isOpen });
  const [base, setBase] = useState<number | null>(null);
  const path = `/workflows/${encodeURIComponent(name)}`;
  return (
    <Drawer isOpen={isOpen} onOpenChange={onOpenChange}>
      <Drawer.Backdrop>
        <Drawer.Content className="max-w-md" placement="right">
          <Drawer.Dialog aria-label="Versions" className="flex h-full flex-col">
            <Drawer.CloseTrigger aria-label="Close versions" />
            <Drawer.Header>
              <Drawer.Heading>Versions of {name}</Drawer.Heading>
              <p className="text-sm text-muted">Pick one to open it read-only, or choose a base and compare.</p>
            </Drawer.Header>
            <Drawer.Body className="flex-1 overflow-y-auto">
              {versions.isError ? (
                <Alert status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>The versions could not be loaded</Alert.Title>
                    <Alert.Description>{versions.error.message}</Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : versions.isPending ? (
                <div className="flex flex-col gap-3">
                  {[0, 1, 2].map((i) => (
                    <Skeleton key={i} className="h-12 rounded-lg" />
                  ))}
                </div>
              ) : (
                <ol aria-label="Version history" className="flex flex-col gap-1">
                  {versions.data.map((v) => (
                    <li key={v.version} className={`rounded-lg border px-3 py-2 ${v.version === currentVersion ? "border-accent" : "border-separator"}`}>
                      <div className="flex items-center gap-2">
                        <Chip color="accent" size="sm" variant="soft">
                          v{v.version}
                        </Chip>
                        {v.version === currentVersion ? <span className="text-xs text-muted">shown</span> : null}
                        {v.archived ? <span className="text-xs text-muted">archived</span> : null}
                        <RelativeTime className="ml-auto text-xs text-muted" iso={v.createdAt} />
                      </div>
                      <p className="mt-1 text-sm text-foreground">{v.message ?? <span className="text-muted italic">No message</span>}</p>
                      <p className="text-xs text-muted">
                        {v.nodeCount} nodes{v.createdByDisplay ? ` · ${v.createdByDisplay}` : ""}
                      </p>
                      <div className="mt-1.5 flex flex-wrap gap-3 text-xs font-medium">
                        <Link className="text-accent hover:underline" href={`${path}?version=${v.version}`}>
                          Open
                        </Link>
                        {base === null ? (
                          <button className="text-accent hover:underline" type="button" onClick={() => setBase(v.version)}>
                            Compare from here…
                          </button>
                        ) : base === v.version ? (
                          <button className="text-muted hover:underline" type="button" onClick={() => setBase(null)}>
                            Cancel compare
                          </button>
                        ) : (
                          <Link
                            className="text-accent hover:underline"
                            href={`${path}/compare?from=${Math.min(base, v.version)}&to=${Math.max(base, v.version)}`}
                          >
                            Compare v{Math.min(base, v.version)} → v{Math.max(base, v.version)}
                          </Link>
                        )}
                      </div>
                    </li>
                  ))}
                </ol>
              )}
            </Drawer.Body>
          </Drawer.Dialog>
        </Drawer.Content>
      </Drawer.Backdrop>
    </Drawer>
  );
}
