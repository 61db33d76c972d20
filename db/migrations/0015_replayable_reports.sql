-- A worker's report can be sent again after its answer was lost, and the
-- retry gets the first attempt's answer: the tasks that report leased (its
-- `next`) are found again and handed over, instead of staying leased to a
-- worker that never heard of them until their leases expire (300 s by
-- default). server/report-task-result.ts, replayedReport, does the finding.
--
-- "leaseReport" is the task whose report leased the row: set by a lease that
-- rode on a report (nf_report_task, or a report's parked poll), NULL by any
-- other lease. Every lease writes it, so a row requeued and leased again never
-- keeps a stale value while leased. No index: it is read only by a retried
-- report, which finds its rows among one queue's leased rows of one worker.
ALTER TABLE "TaskQueues" ADD COLUMN "leaseReport" UUID;

-- nf_lease_tasks (0014) with p_report, written to "leaseReport".
DROP FUNCTION "nf_lease_tasks"(UUID, TEXT, INTEGER, DOUBLE PRECISION, TEXT, TIMESTAMPTZ);

CREATE FUNCTION "nf_lease_tasks"(
  p_namespace UUID, p_queue TEXT, p_count INTEGER, p_lease_seconds DOUBLE PRECISION, p_owner TEXT, p_now TIMESTAMPTZ,
  p_report UUID
) RETURNS TABLE ("queue" "TaskQueues", "task" "TaskExecutions")
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_now TIMESTAMPTZ := COALESCE(p_now, now());
  v_locked "TaskQueues";
  v_started RECORD;
BEGIN
  FOR v_locked IN
    SELECT * FROM "TaskQueues" AS "q"
    WHERE "q"."queueName" = p_queue AND "q"."leaseExpiresAt" IS NULL AND "q"."namespaceId" = p_namespace
      AND "q"."visibleAt" <= v_now
    ORDER BY "q"."priority" DESC, "q"."id"
    LIMIT p_count
    FOR UPDATE SKIP LOCKED
  LOOP
    UPDATE "TaskExecutions" AS "t"
    SET "status" = 'IN_PROGRESS', "startedAt" = COALESCE("t"."startedAt", v_now), "pollCount" = "t"."pollCount" + 1,
        "workerId" = p_owner, "updatedAt" = v_now
    WHERE "t"."workflowId" = v_locked."workflowId" AND "t"."id" = v_locked."taskId" AND "t"."namespaceId" = p_namespace
      AND "t"."status" IN ('SCHEDULED', 'IN_PROGRESS')
    -- One record target: PL/pgSQL refuses a row variable beside another.
    RETURNING "t" AS "row", OLD."startedAt" IS NULL AS "first" INTO v_started;
    IF NOT FOUND THEN
      DELETE FROM "TaskQueues" AS "q" WHERE "q"."queueName" = v_locked."queueName" AND "q"."id" = v_locked."id";
      CONTINUE;
    END IF;
    "task" := v_started."row";
    UPDATE "TaskQueues" AS "q"
    SET "leaseExpiresAt" = v_now + make_interval(secs => CASE WHEN ("task")."responseTimeoutSeconds" > 0
          THEN ("task")."responseTimeoutSeconds"::double precision ELSE p_lease_seconds END),
        "leaseOwner" = p_owner, "leaseReport" = p_report
    WHERE "q"."queueName" = v_locked."queueName" AND "q"."id" = v_locked."id"
    RETURNING "q".* INTO "queue";
    IF v_started."first" AND ("task")."timeoutSeconds" > 0 THEN
      INSERT INTO "Timers" ("kind", "fireAt", "namespaceId", "workflowId", "taskId")
      VALUES ('startToClose', ("task")."startedAt" + make_interval(secs => ("task")."timeoutSeconds"::double precision),
              ("task")."namespaceId", ("task")."workflowId", ("task")."id");
    END IF;
    RETURN NEXT;
  END LOOP;
END;
$$;

-- nf_report_task (0014), its lease now marked with the reported task.
CREATE OR REPLACE FUNCTION "nf_report_task"(
  p_namespace UUID, p_workflow UUID, p_task UUID, p_status TEXT, p_output JSONB, p_output_ref TEXT, p_reason TEXT,
  p_owner TEXT, p_now TIMESTAMPTZ, p_next INTEGER, p_lease_seconds DOUBLE PRECISION
) RETURNS TABLE ("queue" "TaskQueues", "task" "TaskExecutions", "gated" BOOLEAN)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- Local to this transaction: the caller wakes the deciders once it has committed.
  PERFORM set_config('node_flow.decide_wake', 'after_commit', true);
  "task" := "nf_complete_task"(p_namespace, p_workflow, p_task, p_status, p_output, p_output_ref, p_reason, p_owner, p_now);
  "gated" := EXISTS (
    SELECT 1 FROM "TaskDefinitions" AS "d"
    WHERE "d"."namespaceId" = p_namespace AND "d"."name" = ("task")."queueName"
      AND ("d"."rateLimitPerFrequency" > 0 OR "d"."concurrentExecLimit" > 0 OR "d"."semaphoreName" IS NOT NULL));
  RETURN NEXT;
  IF p_next > 0 AND p_owner IS NOT NULL AND ("task")."queueName" IS NOT NULL AND NOT "gated" THEN
    "gated" := NULL;
    RETURN QUERY SELECT "l"."queue", "l"."task", NULL::boolean
      FROM "nf_lease_tasks"(p_namespace, ("task")."queueName", p_next, p_lease_seconds, p_owner, p_now, p_task) AS "l";
  END IF;
END;
$$;
