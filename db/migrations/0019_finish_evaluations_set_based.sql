-- nf_finish_evaluations (0017) with its version bumps and its events in one
-- statement each for the whole batch, where it ran both once per workflow;
-- and no seen-mark statement for a workflow with nothing to mark (an
-- evaluation after a start, a timer or a signal).
--
-- Why: a write statement costs Postgres more than its rows. Each execution
-- starts an executor, locks every partition its generic plan names, runs the
-- statement's triggers (the WorkflowEvents notification is per statement), and
-- prepares the table's CHECK constraints again (execMain.c's ExecRelCheck
-- keeps them per statement): a scratch loop of single-row UPDATEs on a copy
-- of "TaskExecutions" spent 28–40 µs more of Postgres's CPU per statement with
-- its five CHECKs than without them (one connection, prepared generic plans,
-- 20,000 statements each, interleaved). Under load one evaluation transaction
-- finishes five to eight workflows, and the loop paid that start-up fifteen to
-- twenty-four times.
--
-- The seen marks stay one statement per workflow. Set-based, their UPDATE's
-- generic plan (made once per connection, often while partitions are small)
-- put the partitions' whole pending indexes on the outer side of the join,
-- read for every call, rather than probing each workflow's partition: the
-- workflow's id as a PL/pgSQL variable is what prunes "TaskExecutions" to one
-- hash partition when the statement starts (item 17 in docs/performance.md).
-- The bump and the events join the batch to their tables in nested loops
-- whose inner scans take the workflow's id as a parameter, one probe a
-- workflow; hash and merge joins are disabled for the function, as sequential
-- scans already were (0018), so that a batch the planner cannot size never
-- reads a table whole.
--
-- Same preconditions as 0017: the caller holds every workflow's row lock (the
-- evaluation's claim), which is what makes "max(seq) + i" safe; a workflow
-- appears once in a batch.
CREATE OR REPLACE FUNCTION "nf_finish_evaluations"(p_batch JSONB) RETURNS VOID
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  v RECORD;
BEGIN
  FOR v IN SELECT * FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "at" TIMESTAMPTZ, "seen" UUID[]) WHERE cardinality("b"."seen") > 0 LOOP
    UPDATE "TaskExecutions" SET "deciderSeenAt" = v."at"
    WHERE "workflowId" = v."w" AND "id" = ANY(v."seen") AND "deciderSeenAt" IS NULL AND "endedAt" IS NOT NULL;
  END LOOP;

  UPDATE "WorkflowExecutions" AS "e" SET "version" = "e"."version" + 1, "updatedAt" = "b"."at"
  FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "at" TIMESTAMPTZ)
  WHERE "e"."id" = "b"."w";

  INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "type", "refName", "taskId", "status", "data")
  SELECT "b"."w", "last"."seq" + "e"."i", "b"."at", "b"."ns", "e"."type", "e"."refName", "e"."taskId", "e"."status", "e"."data"
  FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "ns" UUID, "at" TIMESTAMPTZ, "events" JSONB)
  CROSS JOIN LATERAL (SELECT coalesce(max("h"."seq"), 0) AS "seq" FROM "WorkflowEvents" AS "h" WHERE "h"."workflowId" = "b"."w") AS "last"
  CROSS JOIN LATERAL jsonb_to_recordset("b"."events") AS "e"("i" INT, "type" TEXT, "refName" TEXT, "taskId" UUID, "status" TEXT, "data" JSONB);
END;
$$;
