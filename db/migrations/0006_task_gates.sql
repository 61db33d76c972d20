-- Task gates: rate limits, concurrentExecLimit and named semaphores hold work
-- back at lease time (server/task-gates.ts). Configuration is per queue, as in
-- Conductor: the "TaskDefinitions" row whose name is the queue name.

-- The named semaphore a queue's leases take a permit of, shared by every queue
-- that names it. Null: none. A name with no "Semaphores" row deliberately does
-- not gate (data-model seed), so naming one before configuring it is legal.
ALTER TABLE "TaskDefinitions" ADD COLUMN "semaphoreName" TEXT NULL
  CHECK ("semaphoreName" IS NULL OR length("semaphoreName") BETWEEN 1 AND 255);

-- Which queues to wake when a semaphore's permit comes back (releaseTaskGates,
-- expireSemaphoreHolders): without it that lookup reads every definition of the
-- namespace. Partial, so it holds only the few definitions that name one.
CREATE INDEX "TaskDefinitions_semaphore_idx" ON "TaskDefinitions" ("namespaceId", "semaphoreName")
  WHERE "semaphoreName" IS NOT NULL;

-- A task's permits are released by task id when it ends (every completion and
-- cancellation runs that DELETE, gated or not). The primary key leads with
-- ("namespaceId","name"), so without this the release would walk the
-- namespace's whole stretch of it. The table holds live permits only, so this
-- index stays as small as the table.
CREATE INDEX "SemaphoreHolders_task_idx" ON "SemaphoreHolders" ("taskId");

-- concurrentExecLimit counts the queue's *held* rows (leased, "leaseExpiresAt"
-- set), not TaskExecutions IN_PROGRESS; see countHeldTasks in
-- server/store/concurrency-limits.ts for why. Without this index that count
-- reads every leased row of the queue's hash partition, all queues sharing it:
-- O(in-flight work of an eighth of the cluster) per gated lease, under the
-- queue's gate lock. With it the count reads exactly the queue's held rows,
-- which the limit itself keeps few. Its price is one more index entry per lease
-- and per heartbeat on every queue (the lease already changes an indexed column,
-- so those updates were never HOT); measured in countHeldTasks' comment.
CREATE INDEX "TaskQueues_held_idx" ON "TaskQueues" ("queueName", "namespaceId")
  WHERE "leaseExpiresAt" IS NOT NULL;
