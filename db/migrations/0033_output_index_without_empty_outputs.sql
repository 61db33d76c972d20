-- The output containment index leaves out runs whose output is the empty
-- object. Every run starts with output {} and keeps it until its terminal
-- state, so the full index wrote an entry for every run at its start that the
-- completion (a non-HOT update: it changes "status" and "output") then wrote
-- again with the real output. Now only the completion writes one, and only
-- when there is an output; a run that ends with {} never enters the index.
--
-- Searches keep their results: a search term's value is never {} (listWorkflowExecutions
-- adds `"output" <> '{}'` to every output term whose values are all
-- non-empty, which changes no answer — a non-empty value cannot be contained
-- in {} — and lets the planner prove this predicate).
DROP INDEX "WorkflowExecutions_output_idx";
CREATE INDEX "WorkflowExecutions_output_idx" ON "WorkflowExecutions" USING GIN ("output" jsonb_path_ops)
  WHERE "output" <> '{}'::jsonb;
