-- Human tasks (issue 9): assignment, approvals, deadlines and escalation on
-- the inbox rows, one row per approver, the human-escalation timer kind, and a
-- NOTIFY for the inbox's live updates. Quoting rules as in 0001.

-- Who the task is for, as parsed from the node's resolved `assignee`:
-- "assigneeUserId" / "assigneeGroupId" (0003) for user and group, the role for
-- a role assignee, nothing more for anyone. "assigneeLabel" keeps the text as
-- written, so a user or group that does not exist (or was deleted) still shows
-- what the definition asked for instead of silently becoming "anyone".
ALTER TABLE "HumanTasks"
  ADD COLUMN "assigneeKind" TEXT NOT NULL DEFAULT 'anyone'
    CHECK ("assigneeKind" IN ('user', 'group', 'role', 'anyone')),
  ADD COLUMN "assigneeRole" TEXT
    CHECK ("assigneeRole" IN ('viewer', 'operator', 'editor', 'admin')),
  ADD COLUMN "assigneeLabel" TEXT NOT NULL DEFAULT 'anyone',
  ADD COLUMN "approvalsRequired" INTEGER NOT NULL DEFAULT 1 CHECK ("approvalsRequired" >= 1),
  ADD COLUMN "allowSelfApproval" BOOLEAN NOT NULL DEFAULT true,
  -- The user who started the run (the root run, for a sub-workflow's task),
  -- resolved when the task opens: self-approval is judged against it.
  ADD COLUMN "starterUserId" UUID REFERENCES "Users" ("id") ON DELETE SET NULL,
  -- The buttons; the first is the approving one.
  ADD COLUMN "outcomes" JSONB NOT NULL DEFAULT '[]',
  -- The chosen outcome once COMPLETED.
  ADD COLUMN "outcome" TEXT,
  -- An inline form (node.form.schema / uiSchema); a template form is read
  -- through "formTemplateId" instead, the version resolved when the task opened.
  ADD COLUMN "formSchema" JSONB,
  ADD COLUMN "formUiSchema" JSONB,
  -- The node's escalation chain, and how many of its steps have fired.
  ADD COLUMN "escalation" JSONB NOT NULL DEFAULT '[]',
  ADD COLUMN "escalationLevel" INTEGER NOT NULL DEFAULT 0;

-- The inbox's open list is sorted by due date; this serves the namespace-wide views.
CREATE INDEX "HumanTasks_open_due_idx" ON "HumanTasks" ("namespaceId", "dueAt", "createdAt")
  WHERE "status" IN ('PENDING', 'CLAIMED');

-- One row per distinct person who submitted a task (N approvals): the UNIQUE
-- constraint is what makes "distinct approvers" hold under concurrency.
CREATE TABLE "HumanTaskSubmissions" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "humanTaskId" UUID NOT NULL REFERENCES "HumanTasks" ("id") ON DELETE CASCADE,
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "userId" UUID NOT NULL REFERENCES "Users" ("id"),
  "outcome" TEXT,
  "data" JSONB NOT NULL DEFAULT '{}',
  "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE ("humanTaskId", "userId")
);

-- The escalation deadline of a human task, fired by the timer poller into
-- escalate-human-task (not into decide: the engine has no say in who a task is for).
ALTER TABLE "Timers" DROP CONSTRAINT "Timers_kind_check";
ALTER TABLE "Timers" ADD CONSTRAINT "Timers_kind_check"
  CHECK ("kind" IN ('scheduleToStart', 'startToClose', 'taskTimeout', 'workflowTimeout',
                    'wait', 'retry', 'startDelay', 'humanEscalation'));

-- The inbox's live updates. A trigger for the reason 0002 and 0007 give (a
-- NOTIFY each writer must remember is the one a new path forgets), and only on
-- "HumanTasks": it is written a handful of times per human task, never on the
-- engine's hot path. Payload "namespaceId:id:status", delivered at commit.
CREATE FUNCTION "HumanTasks_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_inbox', NEW."namespaceId"::text || ':' || NEW."id"::text || ':' || NEW."status");
  RETURN NULL;
END;
$$;
CREATE TRIGGER "HumanTasks_notify"
  AFTER INSERT OR UPDATE ON "HumanTasks"
  FOR EACH ROW EXECUTE FUNCTION "HumanTasks_notify"();
