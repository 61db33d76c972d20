-- nf_finish_evaluations (0017) in fewer statements:
-- - the version bumps and the events in one statement each for the whole
--   batch, where it ran both once per workflow;
-- - no seen-mark statement for a workflow with nothing to mark (an evaluation
--   after a start, a timer or a signal);
-- - a workflow the evaluation ended is written in the same UPDATE as its
--   bump, and its open inbox rows are canceled here. The evaluator sent an
--   UPDATE of the run row and one of "HumanTasks" for each workflow it ended
--   (two round trips), and the bump then wrote a second version of the row.
--
-- Why: a write statement costs Postgres more than its rows. Each execution
-- starts an executor, locks every partition its generic plan names, runs the
-- statement's triggers (the WorkflowEvents notification is per statement), and
-- prepares the table's CHECK constraints again (execMain.c's ExecRelCheck
-- keeps them per statement): a scratch loop of single-row UPDATEs on a copy
-- of "TaskExecutions" spent 28–40 µs more of Postgres's CPU per statement with
-- its five CHECKs than without them (one connection, prepared generic plans,
-- 20,000 statements each, interleaved). Under load an evaluation transaction
-- finishes about six workflows (5.8 in a 20-second closed loop), and the loop
-- paid that start-up about eighteen times.
--
-- The seen marks stay one statement per workflow, and so does the inbox's
-- cancel (one per workflow ended, a few a batch). Set-based, the seen marks'
-- UPDATE's generic plan (made once per connection, often while partitions
-- are small) put the partitions' whole pending indexes on the outer side of
-- the join, read for every call, rather than probing each workflow's
-- partition — the workflow's id as a PL/pgSQL variable is what prunes
-- "TaskExecutions" to one hash partition when the statement starts (item 17
-- in docs/performance.md) — and the cancel's read every open inbox row.
-- The bump and the events join the batch to their tables in nested loops
-- whose inner scans take the workflow's id as a parameter, one probe a
-- workflow; hash and merge joins are disabled for the function, as sequential
-- scans already were (0018), so that a batch the planner cannot size never
-- reads a table whole.
--
-- Same preconditions as 0017: the caller holds every workflow's row lock (the
-- evaluation's claim), which is what makes "max(seq) + i" safe; a workflow
-- appears once in a batch. An element with "status" ended its workflow:
-- "status", "output", "outputRef", "reason" and "failedTaskRef" are its
-- terminal columns, and "at" its "endedAt". The bump of one that did not end
-- assigns its row's own values back, which leaves the update HOT (Postgres
-- compares the values of indexed columns, not the SET list).
CREATE OR REPLACE FUNCTION "nf_finish_evaluations"(p_batch JSONB) RETURNS VOID
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  v RECORD;
BEGIN
  FOR v IN SELECT * FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "at" TIMESTAMPTZ, "seen" UUID[], "status" TEXT)
           WHERE cardinality("b"."seen") > 0 OR "b"."status" IS NOT NULL LOOP
    IF cardinality(v."seen") > 0 THEN
      UPDATE "TaskExecutions" SET "deciderSeenAt" = v."at"
      WHERE "workflowId" = v."w" AND "id" = ANY(v."seen") AND "deciderSeenAt" IS NULL AND "endedAt" IS NOT NULL;
    END IF;
    IF v."status" IS NOT NULL THEN
      UPDATE "HumanTasks" SET "status" = 'CANCELED', "updatedAt" = v."at"
      WHERE "workflowId" = v."w" AND "status" IN ('PENDING', 'CLAIMED');
    END IF;
  END LOOP;

  UPDATE "WorkflowExecutions" AS "e"
  SET "version" = "e"."version" + 1, "updatedAt" = "b"."at",
      "status" = coalesce("b"."status", "e"."status"),
      "output" = CASE WHEN "b"."status" IS NULL THEN "e"."output" ELSE "b"."output" END,
      "outputRef" = CASE WHEN "b"."status" IS NULL THEN "e"."outputRef" ELSE "b"."outputRef" END,
      "endedAt" = CASE WHEN "b"."status" IS NULL THEN "e"."endedAt" ELSE "b"."at" END,
      "reasonForIncompletion" = CASE WHEN "b"."status" IS NULL THEN "e"."reasonForIncompletion" ELSE "b"."reason" END,
      "failedTaskRef" = CASE WHEN "b"."status" IS NULL THEN "e"."failedTaskRef" ELSE "b"."failedTaskRef" END
  FROM jsonb_to_recordset(p_batch)
    AS "b"("w" UUID, "at" TIMESTAMPTZ, "status" TEXT, "output" JSONB, "outputRef" TEXT, "reason" TEXT, "failedTaskRef" TEXT)
  WHERE "e"."id" = "b"."w";

  INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "type", "refName", "taskId", "status", "data")
  SELECT "b"."w", "last"."seq" + "e"."i", "b"."at", "b"."ns", "e"."type", "e"."refName", "e"."taskId", "e"."status", "e"."data"
  FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "ns" UUID, "at" TIMESTAMPTZ, "events" JSONB)
  CROSS JOIN LATERAL (SELECT coalesce(max("h"."seq"), 0) AS "seq" FROM "WorkflowEvents" AS "h" WHERE "h"."workflowId" = "b"."w") AS "last"
  CROSS JOIN LATERAL jsonb_to_recordset("b"."events") AS "e"("i" INT, "type" TEXT, "refName" TEXT, "taskId" UUID, "status" TEXT, "data" JSONB);
END;
$$;
