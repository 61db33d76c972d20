-- Engine tables: executions, tasks, queues, timers, events, concurrency control.
--
-- Every identifier is double-quoted (see 0001). None of these tables has a
-- foreign key to "Namespaces", deliberately: an FK check takes FOR KEY SHARE on
-- the referenced row, and on these tables nearly every insert references the
-- same handful of namespace rows, so every start, schedule and enqueue would
-- contend on one tuple's lock (and churn MultiXact ids) for a check the
-- repositories already make by filtering on "namespaceId". Nor do they reference
-- each other: an FK *to* a partitioned table needs its whole key (e.g. "id" plus
-- "startedAt"), and an FK *from* one adds the same shared lock to the hottest
-- insert paths in the system.
--
-- Status values are CHECKed in the table rather than trusted to the code: a
-- typo'd status would otherwise drop out of every partial index silently.

-- ---------------------------------------------------------------------------
-- WorkflowExecutions: RANGE monthly on "startedAt". Old executions go a partition
-- at a time (near-instant) instead of a DELETE that then has to be vacuumed.
CREATE TABLE "WorkflowExecutions" (
  "id" UUID NOT NULL DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL,
  "defName" TEXT NOT NULL,
  "defVersion" INTEGER NOT NULL,
  "status" TEXT NOT NULL DEFAULT 'RUNNING'
    CHECK ("status" IN ('RUNNING', 'COMPLETED', 'FAILED', 'TIMED_OUT', 'TERMINATED', 'PAUSED')),
  -- Optimistic-concurrency counter, bumped on every committed evaluation.
  "version" BIGINT NOT NULL DEFAULT 0,
  "correlationId" TEXT,
  -- Informational only: the guarantee lives in "IdempotencyKeys" (see there).
  "idempotencyKey" TEXT,
  "priority" INTEGER NOT NULL DEFAULT 0 CHECK ("priority" BETWEEN 0 AND 99),
  "input" JSONB NOT NULL DEFAULT '{}',
  "output" JSONB NOT NULL DEFAULT '{}',
  "variables" JSONB NOT NULL DEFAULT '{}',
  -- "<scheme>:<key>" of a payload over 256 KB in the blob store; the JSONB column
  -- then holds '{}'. Refs carry their scheme because they outlive the deployment.
  "inputRef" TEXT,
  "outputRef" TEXT,
  "parentWorkflowId" UUID,
  "parentTaskId" UUID,
  "startedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "endedAt" TIMESTAMPTZ,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "reasonForIncompletion" TEXT,
  -- The ref of the task whose failure ended the workflow (Conductor's
  -- failedReferenceTaskNames / failedTaskId are derived from it).
  "failedTaskRef" TEXT,
  "createdBy" TEXT,
  -- A primary key on a partitioned table must include the partition key. So a
  -- lookup by "id" alone probes this index once per partition (13 or so): cheap,
  -- but callers that know "startedAt" should pass it and prune to one.
  PRIMARY KEY ("id", "startedAt")
) PARTITION BY RANGE ("startedAt");

-- Every ordered index is "startedAt" DESC to match the listing's sort: with the
-- order reversed the index still filters, but the planner must sort the whole
-- matched set before it can return the first page. The sort is really
-- ("startedAt" DESC, "id" DESC) — the keyset — so "id" DESC ends each of them
-- too: without it the filtered listings pay an incremental sort per page and the
-- cursor's row comparison is only partly an index condition.
CREATE INDEX "WorkflowExecutions_status_idx" ON "WorkflowExecutions" ("namespaceId", "status", "startedAt" DESC, "id" DESC);
CREATE INDEX "WorkflowExecutions_def_idx" ON "WorkflowExecutions" ("namespaceId", "defName", "startedAt" DESC, "id" DESC);
-- The unfiltered newest-first listing and the keyset cursor's range scan:
-- ("startedAt", "id") < ($1, $2) is an index condition on exactly this order.
CREATE INDEX "WorkflowExecutions_recent_idx" ON "WorkflowExecutions" ("namespaceId", "startedAt" DESC, "id" DESC);
CREATE INDEX "WorkflowExecutions_correlation_idx" ON "WorkflowExecutions" ("namespaceId", "correlationId")
  WHERE "correlationId" IS NOT NULL;
-- NOT unique, on purpose. A unique index on a partitioned table must include the
-- partition key, and ("namespaceId","idempotencyKey","startedAt") is unique on a
-- value that differs on every insert (startedAt defaults to now()) — it never
-- conflicts, and once silently created duplicate executions. The real guarantee
-- is the unpartitioned "IdempotencyKeys" table; this only reads a start back.
CREATE INDEX "WorkflowExecutions_idempotency_idx" ON "WorkflowExecutions" ("namespaceId", "idempotencyKey")
  WHERE "idempotencyKey" IS NOT NULL;
CREATE INDEX "WorkflowExecutions_parent_idx" ON "WorkflowExecutions" ("parentWorkflowId")
  WHERE "parentWorkflowId" IS NOT NULL;
-- The input.x:y / output.x:y search terms, as JSON containment (@>).
-- jsonb_path_ops: a third the size of the default opclass, and @> is the only
-- operator the search uses.
CREATE INDEX "WorkflowExecutions_input_idx" ON "WorkflowExecutions" USING GIN ("input" jsonb_path_ops);
CREATE INDEX "WorkflowExecutions_output_idx" ON "WorkflowExecutions" USING GIN ("output" jsonb_path_ops);
-- Orphaned-payload collection: which blob refs are still referenced.
CREATE INDEX "WorkflowExecutions_input_ref_idx" ON "WorkflowExecutions" ("inputRef") WHERE "inputRef" IS NOT NULL;
CREATE INDEX "WorkflowExecutions_output_ref_idx" ON "WorkflowExecutions" ("outputRef") WHERE "outputRef" IS NOT NULL;

CREATE TABLE "WorkflowExecutions_default" PARTITION OF "WorkflowExecutions" DEFAULT;

-- ---------------------------------------------------------------------------
-- IdempotencyKeys: UNpartitioned, so its primary key actually constrains (see
-- the note on WorkflowExecutions_idempotency_idx). Claimed with INSERT … ON
-- CONFLICT in the same transaction that inserts the execution.
CREATE TABLE "IdempotencyKeys" (
  "namespaceId" UUID NOT NULL,
  "key" TEXT NOT NULL,
  "workflowId" UUID NOT NULL,
  -- Conductor's idempotencyStrategy: what a second start with this key gets.
  "strategy" TEXT NOT NULL CHECK ("strategy" IN ('FAIL', 'RETURN_EXISTING', 'FAIL_ON_RUNNING')),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Null: never expires. An expired key may be claimed again (see
  -- server/store/idempotency-keys.ts) before the pruner gets to it.
  "expiresAt" TIMESTAMPTZ,
  PRIMARY KEY ("namespaceId", "key")
);
CREATE INDEX "IdempotencyKeys_expires_idx" ON "IdempotencyKeys" ("expiresAt") WHERE "expiresAt" IS NOT NULL;

-- ---------------------------------------------------------------------------
-- TaskExecutions: HASH 16 ways on "workflowId", so one workflow's tasks are
-- co-located and the frontier query touches a single partition.
CREATE TABLE "TaskExecutions" (
  "id" UUID NOT NULL DEFAULT uuidv7(),
  "workflowId" UUID NOT NULL,
  "namespaceId" UUID NOT NULL,
  -- Task identity is ("workflowId","refName","iteration","attempt"); see the
  -- unique index below.
  "refName" TEXT NOT NULL,
  -- DO_WHILE iteration (0 outside loops). Part of identity: each pass is a task.
  "iteration" INTEGER NOT NULL DEFAULT 0 CHECK ("iteration" >= 0),
  -- 0 for the first attempt; Conductor's retryCount is this number.
  "attempt" INTEGER NOT NULL DEFAULT 0 CHECK ("attempt" >= 0),
  -- SIMPLE, HTTP, SWITCH, SUB_WORKFLOW, HUMAN, …
  "taskType" TEXT NOT NULL,
  -- For SIMPLE tasks the task definition (and default queue); for system tasks
  -- usually the type. Retry budgets and rate limits are per this name.
  "taskDefName" TEXT NOT NULL,
  -- The TaskQueues queue the task was enqueued on (taskDefName, or
  -- "<domain>:<taskDefName>"). Kept here because every TaskQueues lookup must
  -- carry the queue name or it scans all eight partitions, and a worker's
  -- update names only the task.
  "queueName" TEXT,
  "domain" TEXT,
  "status" TEXT NOT NULL DEFAULT 'SCHEDULED'
    CHECK ("status" IN ('SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED',
                        'FAILED_WITH_TERMINAL_ERROR', 'TIMED_OUT', 'CANCELED', 'SKIPPED')),
  "input" JSONB NOT NULL DEFAULT '{}',
  "output" JSONB NOT NULL DEFAULT '{}',
  "inputRef" TEXT,
  "outputRef" TEXT,
  "pollCount" INTEGER NOT NULL DEFAULT 0,
  "workerId" TEXT,
  "scheduledAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "startedAt" TIMESTAMPTZ,
  -- Set whenever a task reaches a terminal status (including SKIPPED and
  -- CANCELED): the unprocessed index below is keyed on it.
  "endedAt" TIMESTAMPTZ,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Conductor's callbackAfterSeconds from the worker's last IN_PROGRESS update;
  -- the queue row's "visibleAt" is what actually delays redelivery.
  "callbackAfterSeconds" INTEGER NOT NULL DEFAULT 0 CHECK ("callbackAfterSeconds" >= 0),
  -- Timeouts are snapshotted from the task definition at schedule time, so a
  -- definition edited mid-run does not move deadlines already armed in Timers.
  "responseTimeoutSeconds" INTEGER,
  "timeoutSeconds" INTEGER,
  "pollTimeoutSeconds" INTEGER,
  "reasonForIncompletion" TEXT,
  -- The decider's watermark: null until an evaluation has reacted to this task
  -- reaching a terminal state. A column rather than a comparison of timestamps,
  -- because commit order is not timestamp order: a completion stamped before an
  -- evaluation's start can commit after it, and would be missed forever.
  "deciderSeenAt" TIMESTAMPTZ,
  -- The container (DO_WHILE, FORK_JOIN_DYNAMIC) whose body spawned this task.
  "parentRef" TEXT,
  -- Which FORK_JOIN_DYNAMIC instance this is (0-based); null otherwise.
  "forkIndex" INTEGER,
  -- For SUB_WORKFLOW tasks: the child execution.
  "subWorkflowId" UUID,
  PRIMARY KEY ("workflowId", "id")
) PARTITION BY HASH ("workflowId");

-- Task identity. What makes the decider safe to re-run: scheduling is INSERT …
-- ON CONFLICT DO NOTHING on this index. "attempt" is part of it because without
-- it a retry writes at the failed attempt's slot, ON CONFLICT absorbs it, and
-- the retry silently never runs while the decider reports it scheduled one.
-- Legal on a partitioned table because it contains the partition key.
CREATE UNIQUE INDEX "TaskExecutions_identity_idx" ON "TaskExecutions" ("workflowId", "refName", "iteration", "attempt");
-- The pending frontier. Partial, so its size tracks in-flight work rather than
-- total history. Queries must repeat this predicate for the planner to use it.
CREATE INDEX "TaskExecutions_frontier_idx" ON "TaskExecutions" ("workflowId")
  WHERE "status" NOT IN ('COMPLETED', 'COMPLETED_WITH_ERRORS', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR',
                         'TIMED_OUT', 'CANCELED', 'SKIPPED');
-- Terminal tasks the decider has not reacted to yet. Holds a handful, not history.
CREATE INDEX "TaskExecutions_unprocessed_idx" ON "TaskExecutions" ("workflowId")
  WHERE "endedAt" IS NOT NULL AND "deciderSeenAt" IS NULL;
-- Recent attempts per task definition: the retry-budget check, which would
-- otherwise sequentially scan task history on every retry decision.
CREATE INDEX "TaskExecutions_recent_by_def_idx" ON "TaskExecutions" ("namespaceId", "taskDefName", "scheduledAt" DESC);

DO $$
BEGIN
  FOR "r" IN 0..15 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "TaskExecutions" FOR VALUES WITH (MODULUS 16, REMAINDER %s)',
      'TaskExecutions_p' || "r", "r");
  END LOOP;
END;
$$;

-- ---------------------------------------------------------------------------
-- TaskQueues: HASH 8 ways on "queueName". The highest-churn table in the system
-- and deliberately narrow: leasing must not touch anything wider. "taskType" is
-- denormalised (written once at enqueue, never updated) so the in-process
-- system-task runner finds its work without joining the widest table.
CREATE TABLE "TaskQueues" (
  "queueName" TEXT NOT NULL,
  "id" BIGSERIAL NOT NULL,
  "taskId" UUID NOT NULL,
  "workflowId" UUID NOT NULL,
  "namespaceId" UUID NOT NULL,
  "taskType" TEXT NOT NULL,
  "priority" INTEGER NOT NULL DEFAULT 0,
  "enqueuedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Not deliverable before this (callbackAfterSeconds, retry delay).
  "visibleAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "leaseExpiresAt" TIMESTAMPTZ,
  "leaseOwner" TEXT,
  PRIMARY KEY ("queueName", "id")
) PARTITION BY HASH ("queueName");

-- The dequeue path. Partial on unleased rows, so leased work leaves the index
-- entirely rather than being scanned past on every poll.
CREATE INDEX "TaskQueues_dequeue_idx" ON "TaskQueues" ("queueName", "priority" DESC, "id")
  WHERE "leaseExpiresAt" IS NULL;
-- Drives the lease-expiry sweeper.
CREATE INDEX "TaskQueues_lease_idx" ON "TaskQueues" ("leaseExpiresAt") WHERE "leaseExpiresAt" IS NOT NULL;
-- ("queueName","taskId"), not ("taskId"): a unique index on a partitioned table
-- must contain the partition key (Postgres rejects the narrower one outright).
-- Consequence: every lookup by task (renew, ack, release, defer) must also carry
-- the queue name, or it degenerates into a scan of all eight partitions.
CREATE UNIQUE INDEX "TaskQueues_task_idx" ON "TaskQueues" ("queueName", "taskId");

-- Storage parameters cannot be set on a partitioned parent, only on leaves.
-- Stock autovacuum (20% dead before it acts) lets dead tuples from enqueue/lease/
-- ack churn pile up faster than they are reclaimed, and dequeue latency degrades
-- steadily until someone notices. fillfactor 70 leaves room on the page for HOT
-- updates, so stamping a lease does not have to move the row.
DO $$
BEGIN
  FOR "r" IN 0..7 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "TaskQueues" FOR VALUES WITH (MODULUS 8, REMAINDER %s) '
      || 'WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70)',
      'TaskQueues_p' || "r", "r");
  END LOOP;
END;
$$;

-- ---------------------------------------------------------------------------
-- DecideQueues: the primary key IS the dedupe — many completions collapse into
-- one pending evaluation. Enqueue is INSERT … ON CONFLICT ("workflowId") DO
-- UPDATE SET "reason" = …, never DO NOTHING: the update takes the row lock that
-- makes a concurrent claim-and-delete serialize with it. "reason" is read by
-- nobody; it exists to give the conflict something to update. Do not drop it.
CREATE TABLE "DecideQueues" (
  "workflowId" UUID PRIMARY KEY,
  "namespaceId" UUID NOT NULL,
  "enqueuedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "reason" TEXT
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);
-- Deciders take the oldest pending evaluations first.
CREATE INDEX "DecideQueues_enqueued_idx" ON "DecideQueues" ("enqueuedAt");

-- ---------------------------------------------------------------------------
-- Timers: RANGE hourly on "fireAt", 48 hours kept. The poller scans only the
-- leading partitions with an index range scan (SKIP LOCKED), and old partitions
-- are dropped rather than deleted, so millions of pending timers stay cheap:
-- the working set is always the current hour. Deadlines usually outlive their
-- use (the task finished first), so the sweeper re-checks state before acting.
-- Cancelling one by id needs its "fireAt" too, or it probes every partition.
CREATE TABLE "Timers" (
  "id" UUID NOT NULL DEFAULT uuidv7(),
  "fireAt" TIMESTAMPTZ NOT NULL,
  "kind" TEXT NOT NULL CHECK ("kind" IN ('scheduleToStart', 'startToClose', 'taskTimeout', 'workflowTimeout',
                                          'wait', 'retry', 'startDelay')),
  "namespaceId" UUID NOT NULL,
  "workflowId" UUID NOT NULL,
  -- The attempt the deadline belongs to; null for workflow-level timers. A task
  -- id names one attempt, so a retry's new attempt is never failed by an old
  -- attempt's deadline.
  "taskId" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "claimedAt" TIMESTAMPTZ,
  "claimedBy" TEXT,
  PRIMARY KEY ("id", "fireAt")
) PARTITION BY RANGE ("fireAt");
CREATE INDEX "Timers_due_idx" ON "Timers" ("fireAt") WHERE "claimedAt" IS NULL;
CREATE TABLE "Timers_default" PARTITION OF "Timers" DEFAULT;

-- ---------------------------------------------------------------------------
-- OutboxEvents: written in the same transaction as the state change they
-- announce, delivered by a relay afterwards.
CREATE TABLE "OutboxEvents" (
  "id" BIGSERIAL PRIMARY KEY,
  "namespaceId" UUID NOT NULL,
  "topic" TEXT NOT NULL,
  "workflowId" UUID,
  "payload" JSONB NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "nextAttemptAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "lastError" TEXT,
  "publishedAt" TIMESTAMPTZ,
  "deadLetteredAt" TIMESTAMPTZ
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);
-- The relay's hot path: deliverable events only. Published and dead-lettered
-- rows leave the index entirely, which is what lets the dead letter be kept
-- (inspectable, replayable) without the hot path paying for it.
CREATE INDEX "OutboxEvents_deliverable_idx" ON "OutboxEvents" ("nextAttemptAt", "id")
  WHERE "publishedAt" IS NULL AND "deadLetteredAt" IS NULL;
CREATE INDEX "OutboxEvents_deadletter_idx" ON "OutboxEvents" ("deadLetteredAt") WHERE "deadLetteredAt" IS NOT NULL;

-- ---------------------------------------------------------------------------
-- WorkflowEvents: RANGE monthly on "at". The history view and the live SSE
-- stream's resume both read ("workflowId", "seq").
CREATE TABLE "WorkflowEvents" (
  "workflowId" UUID NOT NULL,
  -- Gap-free per workflow and allocated from the table (max + 1 under the
  -- workflow's row lock), never from a clock: two events in one transaction can
  -- share a timestamp to the microsecond, and a history ordered by tie-breaking
  -- is not a history.
  "seq" BIGINT NOT NULL CHECK ("seq" >= 1),
  "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "namespaceId" UUID NOT NULL,
  "type" TEXT NOT NULL,
  "refName" TEXT,
  "taskId" UUID,
  "status" TEXT,
  "data" JSONB NOT NULL DEFAULT '{}',
  -- Must include "at", the partition key, and "at" defaults to each transaction's
  -- now(): so this key does NOT stop two writers storing the same seq. The
  -- allocator's workflow row lock (appendWorkflowEvents) is the only guarantee. Its btree
  -- is also the ("workflowId", "seq") index the history and the SSE resume read:
  -- a second, narrower index on those two columns would be pure write cost.
  CONSTRAINT "WorkflowEvents_pkey" PRIMARY KEY ("workflowId", "seq", "at")
) PARTITION BY RANGE ("at");
CREATE TABLE "WorkflowEvents_default" PARTITION OF "WorkflowEvents" DEFAULT;

-- The trigger is the design, not a detail: a NOTIFY every writer must remember
-- is a bug waiting on whichever path nobody exercised, and a trigger cannot be
-- forgotten. Postgres delivers it at commit, so nothing that rolls back is
-- announced. The payload is "workflowId:seq" only: a notification is capped at
-- 8000 bytes and payloads are unbounded, so listeners read the row themselves.
CREATE FUNCTION "WorkflowEvents_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_workflow_events', NEW."workflowId"::text || ':' || NEW."seq");
  RETURN NULL;
END;
$$;
-- FOR EACH ROW, on the PARENT. Row-level so NEW is assigned: a statement-level
-- trigger referencing NEW does not error, it notifies with an empty payload.
-- On the parent so Postgres clones it onto every partition, including the ones
-- the partition manager creates next month; a per-partition trigger would work
-- until the first roll-over and then go quiet.
CREATE TRIGGER "WorkflowEvents_notify"
  AFTER INSERT ON "WorkflowEvents"
  FOR EACH ROW EXECUTE FUNCTION "WorkflowEvents_notify"();

-- ---------------------------------------------------------------------------
-- Concurrency control. An unconfigured semaphore deliberately does not gate.
CREATE TABLE "Semaphores" (
  "namespaceId" UUID NOT NULL,
  "name" TEXT NOT NULL,
  "permits" INTEGER NOT NULL CHECK ("permits" >= 1),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name")
);

-- Permits are leased, not held, so a crashed worker cannot drain one per crash.
-- No FK to "Semaphores": acquire already locks the semaphore row to count
-- holders, and an FK would add a second shared lock on it per acquire.
CREATE TABLE "SemaphoreHolders" (
  "namespaceId" UUID NOT NULL,
  "name" TEXT NOT NULL,
  "taskId" UUID NOT NULL,
  "workflowId" UUID NOT NULL,
  "acquiredAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "leaseExpiresAt" TIMESTAMPTZ NOT NULL,
  PRIMARY KEY ("namespaceId", "name", "taskId")
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000);
-- Counting live holders, the hot path of every acquire: with "leaseExpiresAt" in
-- the key it is an index-only range count.
CREATE INDEX "SemaphoreHolders_count_idx" ON "SemaphoreHolders" ("namespaceId", "name", "leaseExpiresAt");
-- The expiry sweep.
CREATE INDEX "SemaphoreHolders_expiry_idx" ON "SemaphoreHolders" ("leaseExpiresAt");

-- A table of its own rather than a count of queue rows, because those are
-- deleted on acknowledgement: the history a rate limit needs is exactly what the
-- queue throws away. Fixed windows (a single upsert on the hot path) at the
-- price of up to 2x burst at a boundary.
CREATE TABLE "RateLimitBuckets" (
  "namespaceId" UUID NOT NULL,
  "queueName" TEXT NOT NULL,
  "windowStart" TIMESTAMPTZ NOT NULL,
  "count" INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY ("namespaceId", "queueName", "windowStart")
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_cost_limit = 2000, fillfactor = 70);
-- Pruning old windows. "count" is the only column an upsert changes and it is in
-- no index, so increments stay HOT despite this index.
CREATE INDEX "RateLimitBuckets_window_idx" ON "RateLimitBuckets" ("windowStart");

-- Per task definition, so unrelated tasks never share results. Offloaded outputs
-- are not cached: a cached blob ref would outlive the blob it points at.
CREATE TABLE "TaskOutputCache" (
  "namespaceId" UUID NOT NULL,
  "taskDefName" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "output" JSONB NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "expiresAt" TIMESTAMPTZ NOT NULL,
  PRIMARY KEY ("namespaceId", "taskDefName", "key")
);
-- The hourly prune.
CREATE INDEX "TaskOutputCache_expires_idx" ON "TaskOutputCache" ("expiresAt");

-- ---------------------------------------------------------------------------
-- Seed the current and next period of every time-partitioned engine table, so a
-- fresh database never writes to DEFAULT: rows in DEFAULT cannot be retired by
-- dropping a partition, and Postgres refuses to create a partition over rows
-- already sitting in DEFAULT — the bug that once made the roller fail on the
-- current period forever. Names and bounds must match the partition manager's
-- exactly: "<Table>_pYYYYMM" for [first of month, first of next month) and
-- "<Table>_pYYYYMMDDHH" for one hour, all in UTC.
DO $$
DECLARE
  -- UTC wall-clock `timestamp` arithmetic: timestamptz + interval steps in the
  -- session's TimeZone and would put a month boundary off by the zone offset.
  "nowUtc" timestamp := now() AT TIME ZONE 'UTC';
  "lo" timestamp;
  "hi" timestamp;
  "parent" text;
BEGIN
  FOREACH "parent" IN ARRAY ARRAY['WorkflowExecutions', 'WorkflowEvents'] LOOP
    FOR "i" IN 0..1 LOOP
      "lo" := date_trunc('month', "nowUtc") + make_interval(months => "i");
      "hi" := "lo" + interval '1 month';
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        "parent" || '_p' || to_char("lo", 'YYYYMM'), "parent",
        to_char("lo", 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char("hi", 'YYYY-MM-DD HH24:MI:SS') || '+00');
    END LOOP;
  END LOOP;
  FOR "i" IN 0..1 LOOP
    "lo" := date_trunc('hour', "nowUtc") + make_interval(hours => "i");
    "hi" := "lo" + interval '1 hour';
    EXECUTE format('CREATE TABLE %I PARTITION OF "Timers" FOR VALUES FROM (%L) TO (%L)',
      'Timers_p' || to_char("lo", 'YYYYMMDDHH24'),
      to_char("lo", 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char("hi", 'YYYY-MM-DD HH24:MI:SS') || '+00');
  END LOOP;
END;
$$;
