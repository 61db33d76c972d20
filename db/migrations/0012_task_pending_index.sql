-- One partial index for the decider's frontier instead of two, keyed on the
-- one column a task's hot writes leave alone, so a worker's lease and its
-- completion can be HOT updates (no new entry in any index).
--
-- Before: "TaskExecutions_frontier_idx" (WHERE "status" NOT IN terminal) and
-- "TaskExecutions_unprocessed_idx" (WHERE "endedAt" IS NOT NULL AND
-- "deciderSeenAt" IS NULL). Postgres makes an update HOT only when no column
-- an index is keyed on *or whose predicate reads* changes, so every lease
-- (status) and every completion (status, endedAt) of every task wrote a new
-- entry into all five indexes — the largest part of the WAL per run.
--
-- After: "TaskExecutions_pending_idx" (WHERE "deciderSeenAt" IS NULL). It holds
-- exactly what the two held together, because a task is marked seen only
-- once it has ended: every non-terminal task is unseen, and the unseen
-- terminal ones are the ones the decider has yet to react to (invariant 4).
-- The CHECK below makes that a rule of the table rather than a habit of its
-- writers. A lease changes status, startedAt, pollCount, workerId, updatedAt;
-- a completion status, output, endedAt, updatedAt, reasonForIncompletion —
-- none indexed, none in a predicate. Only the seen mark still moves index
-- entries (and takes the row out of this index).
--
-- fillfactor leaves each page room for those new row versions: a HOT update
-- must fit on the page of the version it replaces. Set per partition (the
-- sixteen are fixed) and applying to pages written from now on.

ALTER TABLE "TaskExecutions" ADD CONSTRAINT "TaskExecutions_seen_only_when_terminal_check"
  CHECK ("deciderSeenAt" IS NULL OR "status" IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED',
                                                  'FAILED_WITH_TERMINAL_ERROR', 'TIMED_OUT', 'CANCELED', 'SKIPPED'));

DROP INDEX "TaskExecutions_frontier_idx";
DROP INDEX "TaskExecutions_unprocessed_idx";
CREATE INDEX "TaskExecutions_pending_idx" ON "TaskExecutions" ("workflowId") WHERE "deciderSeenAt" IS NULL;

DO $$
BEGIN
  FOR "r" IN 0..15 LOOP
    EXECUTE format('ALTER TABLE %I SET (fillfactor = 75)', 'TaskExecutions_p' || "r");
  END LOOP;
END;
$$;
