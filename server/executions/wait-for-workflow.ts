import type { Db } from "@/db/pool";
import { WORKFLOW_EVENTS_CHANNEL } from "../lib/notifier";
import type { Notifier } from "../lib/notifier";

/**
 * Waits until `reached()` holds for a run — it has ended, a task of it has —
 * or `timeoutMs` has passed, or `signal` aborts. Woken by the run's events
 * (the WorkflowEvents trigger's NOTIFY), and re-checks every 250 ms as well:
 * a notification is an optimisation, never a guarantee. For the requests
 * that answer with a run's outcome: Conductor's synchronous execute and a
 * webhook in wait mode.
 */
export async function waitForWorkflowEvent(
  deps: { db: Db; notifier: () => Notifier | null },
  input: { workflowId: string; timeoutMs: number; signal?: AbortSignal; reached: () => Promise<boolean> },
): Promise<boolean> {
  const deadline = Date.now() + input.timeoutMs;
  let wake: (() => void) | undefined;
  // Subscribed before the first read, so an event between the read and the wait is not missed.
  const unsubscribe = deps.notifier()?.subscribe(WORKFLOW_EVENTS_CHANNEL, input.workflowId, () => wake?.());
  try {
    for (;;) {
      if (await input.reached()) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0 || input.signal?.aborted === true) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, Math.min(remaining, 250));
        function finish() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = finish;
      });
    }
  } finally {
    unsubscribe?.();
  }
}
