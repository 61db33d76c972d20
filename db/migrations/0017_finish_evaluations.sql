-- An evaluation transaction's last writes for all its workflows in one round
-- trip (server/evaluator.ts, finishTails): for each workflow, the statement
-- server/store/workflow-events.ts' finishEvaluation runs for one — the ended
-- tasks it reacted to stamped seen (invariant 4's watermark), the execution's
-- version bumped, its new events appended in order after its history's last
-- "seq" — with the workflow's ids as PL/pgSQL variables, so each statement's
-- generic plan prunes "TaskExecutions" to one hash partition when it starts
-- ("= ANY(array)" of workflow ids would prune none: docs/performance.md,
-- item 17). The caller holds every workflow's row lock (the evaluation's
-- claim), which is what makes "max(seq) + i" safe, as in finishEvaluation.
--
-- p_batch: a JSON array of {"w": workflow id, "ns": namespace id, "at":
-- timestamp, "seen": [task ids], "events": [{"i", "type", "refName",
-- "taskId", "status", "data"}]}.
CREATE FUNCTION "nf_finish_evaluations"(p_batch JSONB) RETURNS VOID
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v RECORD;
BEGIN
  FOR v IN SELECT * FROM jsonb_to_recordset(p_batch) AS "b"("w" UUID, "ns" UUID, "at" TIMESTAMPTZ, "seen" UUID[], "events" JSONB) LOOP
    UPDATE "TaskExecutions" SET "deciderSeenAt" = v."at"
    WHERE "workflowId" = v."w" AND "id" = ANY(v."seen") AND "deciderSeenAt" IS NULL AND "endedAt" IS NOT NULL;
    UPDATE "WorkflowExecutions" SET "version" = "version" + 1, "updatedAt" = v."at" WHERE "id" = v."w";
    INSERT INTO "WorkflowEvents" ("workflowId", "seq", "at", "namespaceId", "type", "refName", "taskId", "status", "data")
    SELECT v."w", "last"."seq" + "e"."i", v."at", v."ns", "e"."type", "e"."refName", "e"."taskId", "e"."status", "e"."data"
    FROM (SELECT coalesce(max("seq"), 0) AS "seq" FROM "WorkflowEvents" WHERE "workflowId" = v."w") AS "last",
         jsonb_to_recordset(v."events") AS "e"("i" INT, "type" TEXT, "refName" TEXT, "taskId" UUID, "status" TEXT, "data" JSONB);
  END LOOP;
END;
$$;
