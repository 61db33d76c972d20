-- A worker's report wakes the deciders after its commit, not in it.
--
-- Postgres serialises every committing transaction that has sent a NOTIFY on
-- one lock (async.c's PreCommit_Notify: a lock on the database object, held
-- until the commit is over), and a synchronous commit holds it through its WAL
-- flush. Each report's decide enqueue NOTIFYs through the DecideQueues trigger
-- (0007), so reports queued behind one another's fsyncs: under load nf bench
-- sampled three to four backends at a time waiting on that lock ("Lock:object")
-- against one on CPU (docs/performance.md, item 27).
--
-- nf_report_task now marks its transaction, and the trigger leaves the wake to
-- the caller, which sends it after the commit in a transaction of its own that
-- writes nothing — so it holds the lock for no flush — and coalesces the wakes
-- of reports that commit meanwhile (server/decide-wake.ts). Every other writer
-- still wakes through the trigger, so none can forget to. NOTIFY stays an
-- optimisation (invariant 7): a lost wake costs the decide loop's interval.
CREATE OR REPLACE FUNCTION "DecideQueues_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('node_flow.decide_wake', true) IS DISTINCT FROM 'after_commit' THEN
    PERFORM pg_notify('node_flow_decide', 'wake');
  END IF;
  RETURN NULL;
END;
$$;

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
      FROM "nf_lease_tasks"(p_namespace, ("task")."queueName", p_next, p_lease_seconds, p_owner, p_now) AS "l";
  END IF;
END;
$$;
