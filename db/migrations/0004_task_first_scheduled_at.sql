-- totalTimeoutSeconds (Conductor TaskDef) bounds a task across ALL its attempts,
-- measured from the first attempt's scheduling. An evaluation loads only the
-- latest attempt (invariant 6), so each retry row carries the first attempt's
-- time forward. NULL means "this row's own scheduledAt" (always so for attempt 0).
ALTER TABLE "TaskExecutions" ADD COLUMN "firstScheduledAt" TIMESTAMPTZ NULL;
