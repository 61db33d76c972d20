-- A task's lease, its completion, and a worker's report (completion + next
-- lease) as server-side functions: one round trip each where the statements
-- they hold took four to six (BEGIN, two or four statements, COMMIT). Under
-- load a round trip costs Postgres and the web process more than the writes it
-- carries (docs/performance.md, item 23), and a report is three of a 3-step
-- run's ~43. The statements are the ones server/store/task-queues.ts and
-- task-executions.ts ran, in the same order — the queue row is always locked
-- before its task row (a lease's order), so a completion and a re-lease of the
-- same task cannot deadlock. Each statement here takes a fresh snapshot (a
-- VOLATILE function in READ COMMITTED), as the separate statements did.
--
-- Every identifier a statement compares a partition key with is a PL/pgSQL
-- variable, so the generic plans prune to one partition when they start, like
-- the prepared statements they replace; never "= ANY(array)", which prunes no
-- hash partition (docs/performance.md, item 17).

-- Leases up to p_count visible, unleased tasks of one queue to p_owner and
-- starts them; see leaseTasks in server/store/task-queues.ts for the lease
-- length (the task's "responseTimeoutSeconds" when positive) and the
-- startToClose timer armed on a task's first start. Rows come back highest
-- priority first, then first in, first out. A locked queue row whose task has
-- ended (cancelled while queued) is deleted, not handed out.
CREATE FUNCTION "nf_lease_tasks"(
  p_namespace UUID, p_queue TEXT, p_count INTEGER, p_lease_seconds DOUBLE PRECISION, p_owner TEXT, p_now TIMESTAMPTZ
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
        "leaseOwner" = p_owner
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

-- Ends a task a worker (or the system-task runner) reports: the queue row is
-- deleted first (the lease's lock order), then the task ends by compare-and-set
-- from IN_PROGRESS — held by p_owner when it is not NULL — with its semaphore
-- permit released, the queues its permit or concurrency limit held back woken
-- (channel 'node_flow_tasks', TASKS_CHANNEL in task-queues.ts), and a decide
-- enqueued (invariant 3's ON CONFLICT … DO UPDATE). Returns the ended row.
--
-- A refusal raises SQLSTATE 'NFREF' with the reason as its message
-- ('not_found', 'not_in_progress', 'not_held') and the task's status as it is
-- now as its detail: the error rolls back the queue row's delete with
-- everything else, and a caller's transaction with it.
CREATE FUNCTION "nf_complete_task"(
  p_namespace UUID, p_workflow UUID, p_task UUID, p_status TEXT, p_output JSONB, p_output_ref TEXT, p_reason TEXT,
  p_owner TEXT, p_now TIMESTAMPTZ
) RETURNS "TaskExecutions"
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_now TIMESTAMPTZ := COALESCE(p_now, now());
  v_queue TEXT;
  v_ended "TaskExecutions";
  v_status TEXT;
  v_woken INTEGER;
BEGIN
  SELECT "t"."queueName" INTO v_queue FROM "TaskExecutions" AS "t"
  WHERE "t"."workflowId" = p_workflow AND "t"."id" = p_task AND "t"."namespaceId" = p_namespace;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'NFREF', MESSAGE = 'not_found';
  END IF;
  IF v_queue IS NOT NULL THEN
    DELETE FROM "TaskQueues" AS "q" WHERE "q"."queueName" = v_queue AND "q"."taskId" = p_task AND "q"."namespaceId" = p_namespace;
  END IF;

  UPDATE "TaskExecutions" AS "t"
  SET "status" = p_status, "output" = p_output, "outputRef" = p_output_ref, "reasonForIncompletion" = p_reason,
      "endedAt" = v_now, "updatedAt" = v_now, "deciderSeenAt" = NULL
  WHERE "t"."workflowId" = p_workflow AND "t"."id" = p_task AND "t"."namespaceId" = p_namespace
    AND "t"."status" = 'IN_PROGRESS' AND (p_owner IS NULL OR "t"."workerId" = p_owner)
  RETURNING "t".* INTO v_ended;
  IF NOT FOUND THEN
    -- Say why from the row as it is now (it may have moved since the first read).
    SELECT "t"."status" INTO v_status FROM "TaskExecutions" AS "t" WHERE "t"."workflowId" = p_workflow AND "t"."id" = p_task;
    RAISE EXCEPTION USING ERRCODE = 'NFREF', MESSAGE = CASE WHEN v_status = 'IN_PROGRESS' THEN 'not_held' ELSE 'not_in_progress' END,
      DETAIL = COALESCE(v_status, '');
  END IF;

  -- The gates this task held (server/store/semaphores.ts, taskGateRelease).
  WITH "released" AS (
    DELETE FROM "SemaphoreHolders" AS "h" WHERE "h"."taskId" = p_task AND "h"."namespaceId" = p_namespace
    RETURNING "h"."namespaceId", "h"."name"
  )
  SELECT count(pg_notify('node_flow_tasks', "d"."namespaceId"::text || ':' || "d"."name"))
  INTO v_woken
  FROM (SELECT DISTINCT "namespaceId", "name" FROM "released") AS "f"
  JOIN "TaskDefinitions" AS "d" ON "d"."namespaceId" = "f"."namespaceId" AND "d"."semaphoreName" = "f"."name"
  WHERE "d"."semaphoreName" IS NOT NULL;
  IF v_queue IS NOT NULL THEN
    PERFORM pg_notify('node_flow_tasks', p_namespace::text || ':' || v_queue)
    FROM "TaskDefinitions" AS "d"
    WHERE "d"."namespaceId" = p_namespace AND "d"."name" = v_queue AND "d"."concurrentExecLimit" > 0;
  END IF;

  INSERT INTO "DecideQueues" ("workflowId", "namespaceId", "reason")
  VALUES (v_ended."workflowId", v_ended."namespaceId", 'task ' || v_ended."refName" || ' ' || v_ended."status")
  ON CONFLICT ("workflowId") DO UPDATE SET "reason" = "excluded"."reason";
  RETURN v_ended;
END;
$$;

-- A worker's report: nf_complete_task, then — when p_next > 0, p_owner is
-- given and the task's queue has no gate — nf_lease_tasks of the same queue to
-- the same worker, all in the statement's one transaction (reportTaskResult in
-- server/report-task-result.ts). The first row is the ended task ("queue" NULL,
-- "gated" saying whether the lease was left to the caller because the queue has
-- a rate limit, a concurrency limit or a semaphore — getQueueGates' rule); the
-- rest are the leased tasks in lease order. The deciders' wake is left to the
-- caller, sent after the commit (below).
CREATE FUNCTION "nf_report_task"(
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
-- nf_report_task marks its transaction, and the trigger leaves the wake to
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
