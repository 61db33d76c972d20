import { Card, Skeleton } from "@heroui/react";
import { BLOCK_FROM } from "./breakpoints";
import type { Breakpoint } from "./breakpoints";

/**
 * One placeholder cell. `lines` stands for a row header (a name over a detail
 * line; it takes the free width and never hides), `bar` for a short value,
 * `pill` for a chip, `button` for a row's action. Widths are Tailwind classes
 * written out by the caller, so Tailwind finds them in the source.
 */
export type SkeletonCell =
  | { kind: "lines"; width?: string; detailWidth?: string }
  | { kind: "bar" | "pill" | "button"; width?: string; hiddenBelow?: Breakpoint };

/** A name and detail, a chip from `sm` on, and an action: the shape of most Settings tables. */
export const ROW_WITH_ACTION: readonly SkeletonCell[] = [{ kind: "lines" }, { kind: "pill", hiddenBelow: "sm" }, { kind: "button" }];

const SHAPE = { bar: "h-3 rounded-md", pill: "h-5 rounded-full", button: "h-7 rounded-lg" } as const;
const DEFAULT_WIDTH = { bar: "w-20", pill: "w-14", button: "w-20" } as const;

/**
 * Placeholder rows for a table or list while its first page loads. The shape
 * follows the content it stands for, so the page does not jump when the rows
 * arrive; the container is named for screen readers and marked busy. Inside a
 * panel it is a padded block; `framed` puts it on a card of its own, for a
 * list that stands alone on its page.
 */
export function SkeletonRows({
  label,
  rows = 3,
  cells = ROW_WITH_ACTION,
  framed = false,
}: {
  label: string;
  rows?: number;
  cells?: readonly SkeletonCell[];
  framed?: boolean;
}) {
  const placeholders = Array.from({ length: rows }, (_, row) => (
    <div key={row} className="flex items-center gap-4">
      {cells.map((cell, i) => (
        <PlaceholderCell key={i} cell={cell} />
      ))}
    </div>
  ));
  return framed ? (
    <Card aria-busy="true" aria-label={label} className="gap-4 p-5">
      {placeholders}
    </Card>
  ) : (
    <div aria-busy="true" aria-label={label} className="flex flex-col gap-4 p-5">
      {placeholders}
    </div>
  );
}

function PlaceholderCell({ cell }: { cell: SkeletonCell }) {
  if (cell.kind === "lines") {
    return (
      <div className="flex min-w-0 flex-1 flex-col gap-2">
        <Skeleton className={`h-3.5 max-w-full rounded-md ${cell.width ?? "w-40"}`} />
        <Skeleton className={`h-3 max-w-full rounded-md ${cell.detailWidth ?? "w-28"}`} />
      </div>
    );
  }
  const hidden = cell.hiddenBelow ? BLOCK_FROM[cell.hiddenBelow] : "";
  return <Skeleton className={`shrink-0 ${SHAPE[cell.kind]} ${cell.width ?? DEFAULT_WIDTH[cell.kind]} ${hidden}`} />;
}
