-- One WorkflowEvents notification per workflow per INSERT statement, not per
-- row. An evaluation appends its events in one statement (two or three for a
-- chain step: the task that ended, the one scheduled), and every one of them
-- was a NOTIFY with its own payload — distinct payloads are not folded — each
-- taking Postgres's global notification lock at commit and waking every
-- listening session. The listeners never needed each row: the payload names
-- the workflow, and they read the history from their last seq onwards
-- (server/realtime/, Conductor's synchronous execute); so the payload now
-- carries the statement's highest seq for the workflow.
--
-- Statement-level with a transition table, on the partitioned parent: Postgres
-- collects the rows inserted into any partition (including ones the partition
-- manager creates later) into "inserted". The trigger stays the design, for
-- the reason 0002 gives: no writer can forget it.
CREATE OR REPLACE FUNCTION "WorkflowEvents_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_workflow_events', "workflowId"::text || ':' || max("seq"))
  FROM "inserted"
  GROUP BY "workflowId";
  RETURN NULL;
END;
$$;

DROP TRIGGER "WorkflowEvents_notify" ON "WorkflowEvents";

CREATE TRIGGER "WorkflowEvents_notify"
  AFTER INSERT ON "WorkflowEvents"
  REFERENCING NEW TABLE AS "inserted"
  FOR EACH STATEMENT EXECUTE FUNCTION "WorkflowEvents_notify"();
