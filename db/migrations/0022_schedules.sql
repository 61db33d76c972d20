-- Schedules: a workflow started on a cron expression in a time zone, fired by
-- the poller role (server/schedules/fire-due-schedules.ts), and a record of
-- every fire: the run it started, or why it started none.

CREATE TABLE "Schedules" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  -- Conductor's schedule names: letters, digits, _ and - (its own examples use both).
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$'),
  "description" TEXT,
  "workflowName" TEXT NOT NULL,
  -- Null: the latest version at each fire.
  "workflowVersion" INTEGER CHECK ("workflowVersion" >= 1),
  -- A template over { scheduledTime, executedTime, schedule }, resolved at each fire.
  "input" JSONB NOT NULL DEFAULT '{}',
  "correlationIdTemplate" TEXT,
  "priority" INTEGER NOT NULL DEFAULT 0 CHECK ("priority" BETWEEN 0 AND 99),
  -- 5 or 6 fields or an @hourly-style alias, read by croner; checked on save.
  "cronExpression" TEXT NOT NULL,
  -- An IANA zone; DST gaps and repeats are croner's (fixed-time vs interval jobs).
  "zoneId" TEXT NOT NULL DEFAULT 'UTC',
  "startAt" TIMESTAMPTZ,
  "endAt" TIMESTAMPTZ,
  -- After downtime: skip the missed fires, run the latest of them once, or run
  -- the latest "catchUpLimit" of them.
  "catchUp" TEXT NOT NULL DEFAULT 'skip' CHECK ("catchUp" IN ('skip', 'latest', 'all')),
  "catchUpLimit" INTEGER NOT NULL DEFAULT 10 CHECK ("catchUpLimit" BETWEEN 1 AND 1000),
  -- While this schedule's previous run is still running: start anyway, skip
  -- the fire, or queue one fire to start when it ends.
  "overlap" TEXT NOT NULL DEFAULT 'allow' CHECK ("overlap" IN ('allow', 'skip', 'queue')),
  "paused" BOOLEAN NOT NULL DEFAULT false,
  "pausedReason" TEXT,
  -- The earliest fire not yet handled; null once the end time has passed.
  "nextFireAt" TIMESTAMPTZ,
  -- A fire held by the queue overlap policy until "lastWorkflowId" ends.
  "queuedFireAt" TIMESTAMPTZ,
  -- The run this schedule started last, for the overlap policies.
  "lastWorkflowId" UUID,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name"),
  CHECK ("endAt" IS NULL OR "startAt" IS NULL OR "endAt" >= "startAt")
);
-- The poller's claim: due and not paused, earliest first. Partial, so paused
-- and finished schedules leave the index.
CREATE INDEX "Schedules_due_idx" ON "Schedules" ("nextFireAt") WHERE NOT "paused" AND "nextFireAt" IS NOT NULL;
-- Schedules holding a queued fire, looked at every pass until their run ends.
CREATE INDEX "Schedules_queued_idx" ON "Schedules" ("queuedFireAt") WHERE "queuedFireAt" IS NOT NULL;
CREATE INDEX "Schedules_workflow_idx" ON "Schedules" ("namespaceId", "workflowName");

-- One row per fire. UNIQUE ("scheduleId", "fireAt") is what makes a fire
-- happen once across any number of sidecars and restarts: the row is inserted
-- ON CONFLICT DO NOTHING in the transaction that starts the run, so a fire
-- either has its row and its run, or neither. A long outage's skipped fires
-- beyond the first hundred are one row covering "fireAt" to "throughFireAt".
CREATE TABLE "ScheduleRuns" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "scheduleId" UUID NOT NULL REFERENCES "Schedules" ("id") ON DELETE CASCADE,
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "fireAt" TIMESTAMPTZ NOT NULL,
  "throughFireAt" TIMESTAMPTZ,
  -- Fires this row stands for (1 for one fire); null when a long outage was not counted.
  "fireCount" INTEGER CHECK ("fireCount" >= 1),
  "outcome" TEXT NOT NULL CHECK ("outcome" IN ('started', 'skipped', 'queued', 'failed')),
  "workflowId" UUID,
  "reason" TEXT,
  -- When the scheduler handled the fire; a queued fire's run starts later ("startedAt").
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "startedAt" TIMESTAMPTZ,
  UNIQUE ("scheduleId", "fireAt")
);
-- Retention prunes by age (server/schedules/prune-schedule-runs.ts).
CREATE INDEX "ScheduleRuns_created_idx" ON "ScheduleRuns" ("createdAt");
