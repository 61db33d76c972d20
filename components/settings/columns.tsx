import { RelativeTime } from "../relative-time";
import type { Breakpoint } from "../ui/breakpoints";
import type { DataTableColumn } from "../ui/data-table";
import { EditDeleteButtons } from "../ui/form-actions";

/** A settings table's "Changed" column: when the row was last saved, relative to now. */
export function changedColumn<Row extends { updatedAt: string }>(hiddenBelow: Breakpoint = "lg"): DataTableColumn<Row> {
  return { id: "updated", header: "Changed", hiddenBelow, cell: (row) => <RelativeTime className="text-sm text-muted" iso={row.updatedAt} /> };
}

/** A settings table's last column: Edit and Delete for those who may change the rows, nothing for the others. */
export function editDeleteColumn<Row extends { name: string }>(canWrite: boolean, onEdit: (row: Row) => void, onDelete: (row: Row) => void): DataTableColumn<Row> {
  return {
    id: "actions",
    header: "Actions",
    headerHidden: true,
    className: "w-40 text-right",
    cell: (row) =>
      canWrite ? (
        <div className="flex justify-end gap-1">
          <EditDeleteButtons name={row.name} onDelete={() => onDelete(row)} onEdit={() => onEdit(row)} />
        </div>
      ) : null,
  };
}
