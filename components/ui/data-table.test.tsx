import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { DataTable } from "./data-table";
import type { DataTableColumn } from "./data-table";

type Row = { id: string; name: string; size: number };

const COLUMNS: DataTableColumn<Row>[] = [
  { id: "name", header: "Name", isRowHeader: true, cell: (row) => row.name },
  { id: "size", header: "Size", hiddenBelow: "md", className: "w-28", cell: (row) => String(row.size) },
  { id: "actions", header: "Actions", headerHidden: true, cell: () => null },
];

function render(rows: Row[] | undefined, extra: { empty?: string; footer?: string } = {}) {
  return renderToStaticMarkup(
    <DataTable
      columns={COLUMNS}
      empty={extra.empty}
      footer={extra.footer}
      label="Things"
      loadingLabel="Loading things"
      rowKey={(row) => row.id}
      rows={rows}
    />,
  );
}

describe("DataTable", () => {
  it("shows busy placeholder rows, named for screen readers, until the rows arrive", () => {
    const html = render(undefined, { empty: "Nothing yet" });
    expect(html).toContain('aria-busy="true"');
    expect(html).toContain('aria-label="Loading things"');
    expect(html).not.toContain("Nothing yet");
    expect(html).not.toContain("<table");
  });

  it("shows the empty state instead of a table with no rows", () => {
    const html = render([], { empty: "Nothing yet" });
    expect(html).toBe("Nothing yet");
  });

  it("renders an empty table when it is given no empty state", () => {
    expect(render([])).toContain('aria-label="Things"');
  });

  it("hides a column's heading and cells alike below its breakpoint, and the actions heading but for screen readers", () => {
    const html = render([{ id: "a", name: "alpha", size: 3 }], { footer: "1 thing" });
    expect(html).toContain('aria-label="Things"');
    expect(html).toContain("alpha");
    expect(html.match(/hidden md:table-cell/g)).toHaveLength(2);
    expect(html).toContain("hidden md:table-cell w-28");
    expect(html).toContain('<span class="sr-only">Actions</span>');
    expect(html).toMatch(/aria-live="polite"[^>]*>1 thing</);
  });
});
