/** A Tailwind breakpoint below which a table column (and its placeholder) is hidden. */
export type Breakpoint = "sm" | "md" | "lg" | "xl";

// Spelled out in full: Tailwind only generates classes it finds written in the source.

/** For a block (a placeholder bar): hidden, then shown from the breakpoint on. */
export const BLOCK_FROM: Record<Breakpoint, string> = {
  sm: "hidden sm:block",
  md: "hidden md:block",
  lg: "hidden lg:block",
  xl: "hidden xl:block",
};

/** For a table header or cell: hidden, then a table cell again from the breakpoint on. */
export const TABLE_CELL_FROM: Record<Breakpoint, string> = {
  sm: "hidden sm:table-cell",
  md: "hidden md:table-cell",
  lg: "hidden lg:table-cell",
  xl: "hidden xl:table-cell",
};
