-- The hot SQL functions find every row by its key, so their statements are
-- planned with sequential scans disabled (a statement with no index to use
-- still gets one: Postgres 18 counts disabled plan nodes rather than refusing).
--
-- Why: each connection plans these statements once (a generic plan, db/pool.ts)
-- and keeps the plan until a table it reads is analyzed or vacuumed. Planned
-- while a partition is small, a key lookup is a coin toss that a sequential
-- scan often wins — and the queue's partition then bloats with dead rows
-- (a lease, a completion and a delete per task) until autovacuum's next pass.
-- auto_explain in the closed-loop bench caught the lease's UPDATE of
-- "TaskQueues" by its primary key reading the queue's whole partition (335
-- live rows, 13,756 dead): 8–19 ms a lease on the connections that had drawn
-- that plan, beside ~0.1 ms on the others.
ALTER FUNCTION "nf_lease_tasks"(UUID, TEXT, INTEGER, DOUBLE PRECISION, TEXT, TIMESTAMPTZ, UUID) SET enable_seqscan = off;
ALTER FUNCTION "nf_complete_task"(UUID, UUID, UUID, TEXT, JSONB, TEXT, TEXT, TEXT, TIMESTAMPTZ) SET enable_seqscan = off;
ALTER FUNCTION "nf_finish_evaluations"(JSONB) SET enable_seqscan = off;
