import { WORKFLOW_STATUSES } from "@/engine";
import type { WorkflowStatus } from "@/engine";

/**
 * The runs list's filters that a link may set, read from the page's URL on the
 * server (this module is not a client one, so the page can call it):
 * `/executions?status=FAILED&status=TIMED_OUT&workflow=orders`.
 */
export interface InitialFilters {
  statuses?: WorkflowStatus[];
  workflow?: string;
}

/** The filters a URL's query names; unknown statuses and anything else are ignored. */
export function filtersFromQuery(query: Record<string, string | string[] | undefined>): InitialFilters {
  const list = (value: string | string[] | undefined) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
  const statuses = [...new Set(list(query.status))].filter((s): s is WorkflowStatus => (WORKFLOW_STATUSES as readonly string[]).includes(s));
  const workflow = list(query.workflow)[0]?.trim();
  return { ...(statuses.length > 0 ? { statuses } : {}), ...(workflow ? { workflow } : {}) };
}
