"use client";

import { Table } from "@heroui/react";
import type { ReactNode } from "react";
import { TABLE_CELL_FROM } from "./breakpoints";
import type { Breakpoint } from "./breakpoints";
import { SkeletonRows } from "./skeleton-rows";
import type { SkeletonCell } from "./skeleton-rows";

export interface DataTableColumn<Row> {
  id: string;
  header: string;
  /** The heading is for screen readers only (a column of row actions). */
  headerHidden?: boolean;
  /** The column that names the row; the first one, as a rule. */
  isRowHeader?: boolean;
  /**
   * Hidden, heading and cells alike, on narrower screens, where the row header
   * folds its content in. Never the last column: the table draws its rounded
   * corners on the last cell of a row.
   */
  hiddenBelow?: Breakpoint;
  /** Width and alignment, set on the heading. */
  className?: string;
  cell: (row: Row) => ReactNode;
}

/**
 * A list page's table: its columns, its rows, and what stands in for them.
 * While `rows` is undefined (the first page has not arrived) it shows
 * placeholder rows shaped like `skeleton`; with no rows it shows `empty`, or
 * an empty table when there is no `empty`. A failed load is the caller's to
 * show: it knows what can be retried.
 */
export function DataTable<Row>({
  label,
  columns,
  rows,
  rowKey,
  loadingLabel,
  skeleton,
  skeletonRows,
  empty,
  footer,
  footerAction,
  standalone = false,
  fixedLayout = false,
}: {
  /** The table's accessible name. */
  label: string;
  columns: readonly DataTableColumn<Row>[];
  rows: readonly Row[] | undefined;
  rowKey: (row: Row) => string;
  loadingLabel: string;
  skeleton?: readonly SkeletonCell[];
  skeletonRows?: number;
  empty?: ReactNode;
  /** The count line under the rows, announced when it changes. */
  footer?: ReactNode;
  /** Beside the count line (Load more); null keeps the line's layout without it. */
  footerAction?: ReactNode;
  /** On a page of its own, with its own border; otherwise it sits flush inside a panel's card. */
  standalone?: boolean;
  /** Long names and details truncate in their column instead of widening the table past the screen. */
  fixedLayout?: boolean;
}) {
  if (rows === undefined) return <SkeletonRows cells={skeleton} framed={standalone} label={loadingLabel} rows={skeletonRows} />;
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;

  const count =
    footer === undefined ? null : (
      <span aria-live="polite" className="text-xs text-muted">
        {footer}
      </span>
    );
  return (
    <Table className={standalone ? undefined : "rounded-none border-0 shadow-none"}>
      <Table.ScrollContainer>
        <Table.Content aria-label={label} className={fixedLayout ? "table-fixed" : undefined}>
          <Table.Header>
            {columns.map((column) => (
              <Table.Column key={column.id} className={columnClass(column, column.className)} isRowHeader={column.isRowHeader}>
                {column.headerHidden ? <span className="sr-only">{column.header}</span> : column.header}
              </Table.Column>
            ))}
          </Table.Header>
          <Table.Body>
            {rows.map((row) => (
              <Table.Row key={rowKey(row)} id={rowKey(row)}>
                {columns.map((column) => (
                  <Table.Cell key={column.id} className={columnClass(column)}>
                    {column.cell(row)}
                  </Table.Cell>
                ))}
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Content>
      </Table.ScrollContainer>
      {count === null && footerAction === undefined ? null : (
        <Table.Footer>
          {footerAction === undefined ? (
            count
          ) : (
            <div className="flex w-full flex-col gap-2 sm:flex-row sm:items-center sm:justify-between">
              {count}
              {footerAction}
            </div>
          )}
        </Table.Footer>
      )}
    </Table>
  );
}

function columnClass(column: { hiddenBelow?: Breakpoint }, extra?: string): string | undefined {
  const classes = [column.hiddenBelow ? TABLE_CELL_FROM[column.hiddenBelow] : "", extra ?? ""].filter(Boolean).join(" ");
  return classes || undefined;
}
