-- Wakes the deciders when an evaluation is requested, instead of leaving the
-- request to wait out the decide loop's interval (250 ms): step turnaround —
-- a task completed to the next task leased — is dominated by that wait
-- without it.
--
-- A trigger rather than a pg_notify beside every enqueue, for the reason the
-- WorkflowEvents trigger gives (0002): a NOTIFY each writer must remember is
-- the one a new path forgets, and the symptom would be a quiet slowdown, not an
-- error. Postgres delivers it at commit, so a rolled-back request wakes nobody.
--
-- Only on INSERT: an enqueue that meets a pending row (ON CONFLICT DO UPDATE)
-- adds nothing a decider is not already due to find. And one constant payload:
-- Postgres folds identical notifications within a transaction into one, so an
-- evaluation enqueueing many children notifies once. NOTIFY stays an
-- optimisation (invariant 7): the loop's interval still bounds a missed one.
CREATE FUNCTION "DecideQueues_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_decide', 'wake');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "DecideQueues_notify"
  AFTER INSERT ON "DecideQueues"
  FOR EACH ROW EXECUTE FUNCTION "DecideQueues_notify"();
