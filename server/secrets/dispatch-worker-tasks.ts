import type { Db } from "@/db/pool";
import type { TaskExecutionRow } from "@/db/schema";
import type { BlobStore } from "../lib/blob-store";
import { resolvePayload } from "../lib/payload-offload";
import type { SecretLookup } from "../lib/secret-lookup";
import { reportTaskResult } from "../tasks/report-task-result";
import { dispatchInput, DispatchReferenceError, mayHoldDispatchReferences } from "./dispatch-input";

/**
 * Worker tasks at the moment they are handed out (a REST or Conductor poll,
 * a report's `next`): their input with `${workflow.env.NAME}` resolved, and
 * `${workflow.secrets.NAME}` too when the task definition of the queue says
 * `allowSecrets` — otherwise the worker reads `***`, as the stored input does.
 *
 * A task whose input names a variable or secret the namespace lacks cannot
 * be sent as written: it is failed (terminally, the reason naming what is
 * missing) and left out of the answer, rather than sent with a hole in it.
 */

export interface WorkerDispatchDeps {
  db: Db;
  blobs: BlobStore;
  secrets?: SecretLookup;
}

/** The rows to hand out, in order, their input as dispatched (a dropped row was failed, see above). */
export async function dispatchWorkerTasks<T extends TaskExecutionRow>(deps: WorkerDispatchDeps, rows: readonly T[]): Promise<T[]> {
  const candidates = rows.filter((row) => row.inputRef !== null || mayHoldDispatchReferences(row.input));
  if (candidates.length === 0) return [...rows];
  const names = [...new Set(candidates.map((row) => `${row.namespaceId}\u0000${row.taskDefName}`))];
  const allowed = new Set<string>();
  for (const key of names) {
    const [namespaceId, name] = key.split("\u0000") as [string, string];
    const def = await deps.db.selectFrom("TaskDefinitions").select("allowSecrets").where("namespaceId", "=", namespaceId).where("name", "=", name).executeTakeFirst();
    if (def?.allowSecrets === true) allowed.add(key);
  }
  const out: T[] = [];
  for (const row of rows) {
    if (!candidates.includes(row)) {
      out.push(row);
      continue;
    }
    const stored = row.inputRef === null ? row.input : await resolvePayload(deps.blobs, { inline: row.input, ref: row.inputRef }, `the input of "${row.refName}"`);
    const input = typeof stored === "object" && stored !== null && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
    try {
      const dispatched = await dispatchInput(
        deps,
        { id: row.id, namespaceId: row.namespaceId, workflowId: row.workflowId, refName: row.refName, input },
        allowed.has(`${row.namespaceId}\u0000${row.taskDefName}`) ? "resolve" : "mask",
      );
      out.push({ ...row, input: dispatched.input, inputRef: null });
    } catch (error) {
      if (!(error instanceof DispatchReferenceError)) throw error;
      await reportTaskResult(deps, {
        namespaceId: row.namespaceId,
        workflowId: row.workflowId,
        taskId: row.id,
        status: "FAILED_WITH_TERMINAL_ERROR",
        output: {},
        reason: `The task could not be sent: ${error.message}`,
      });
    }
  }
  return out;
}
