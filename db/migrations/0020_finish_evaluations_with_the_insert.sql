-- nf_finish_evaluations (0019) for a finish that travels with the tasks'
-- insert: an event marked "ifInserted" names a task the evaluator inserted
-- just before it in the same round trip, and is kept only if that insert
-- made the row (its ids are in the setting "node_flow.inserted"). The evaluator gives the tasks it schedules their ids (uuidv7, as
-- Postgres's default would), so the finish no longer waits for the insert's
-- answer to name them, and the insert, the finish and COMMIT go out together:
-- an evaluation of a step is two round trips where it was three (the claim
-- with the frontiers; then these). A task whose identity was already there
-- (invariant 5: ON CONFLICT DO NOTHING) keeps the id it was inserted with,
-- so its TASK_SCHEDULED — written by the evaluation that inserted it — is not
-- written twice. The kept events are numbered on from the history's max
-- "seq" in order, with no gap where one was dropped.
--
-- Everything else is 0019's, unchanged.
CREATE OR REPLACE FUNCTION "nf_finish_evaluations"(p_batch JSONB) RETURNS VOID
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  v RECORD;
  -- The ids the transaction's last tasks' insert made, which it leaves in a
  -- transaction-local setting (insertAndEnqueueTasksStatement in
  -- server/store/task-executions.ts): an array, not a probe of the table per
  -- event, which cost each finish ~0.3 ms on sixteen partitions.
  v_inserted UUID[] := coalesce(nullif(current_setting('node_flow.inserted', true), ''), '{}')::uuid[];
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
  SELECT "b"."w", "last"."seq" + row_number() OVER (PARTITION BY "b"."w" ORDER BY "e"."i"), "b"."at", "b"."ns",
         "e"."type", "e"."refName", "e"."taskId", "e"."status", "e"."data"
  FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "ns" UUID, "at" TIMESTAMPTZ, "events" JSONB)
  CROSS JOIN LATERAL (SELECT coalesce(max("h"."seq"), 0) AS "seq" FROM "WorkflowEvents" AS "h" WHERE "h"."workflowId" = "b"."w") AS "last"
  CROSS JOIN LATERAL jsonb_to_recordset("b"."events")
    AS "e"("i" INT, "type" TEXT, "refName" TEXT, "taskId" UUID, "status" TEXT, "data" JSONB, "ifInserted" BOOLEAN)
  WHERE "e"."ifInserted" IS NOT TRUE OR "e"."taskId" = ANY(v_inserted);
END;
$$;
