-- Human work (forms and the inbox) and task logs. Quoting rules as in 0001.

-- Versioned like workflow definitions, and immutable per version for the same
-- reason: a pending human task points at one version, and editing it in place
-- would change the form under someone who already opened it.
CREATE TABLE "FormTemplates" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  "version" INTEGER NOT NULL CHECK ("version" >= 1),
  "description" TEXT,
  -- JSON Schema of the form's data; rendered with @rjsf/core.
  "schema" JSONB NOT NULL,
  "uiSchema" JSONB NOT NULL DEFAULT '{}',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  UNIQUE ("namespaceId", "name", "version")
);

CREATE FUNCTION "FormTemplates_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."schema" IS DISTINCT FROM OLD."schema"
     OR NEW."uiSchema" IS DISTINCT FROM OLD."uiSchema"
     OR NEW."name" IS DISTINCT FROM OLD."name"
     OR NEW."version" IS DISTINCT FROM OLD."version"
     OR NEW."namespaceId" IS DISTINCT FROM OLD."namespaceId" THEN
    RAISE EXCEPTION 'Form template "%" version % is immutable: save a new version instead', OLD."name", OLD."version"
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER "FormTemplates_immutable"
  BEFORE UPDATE ON "FormTemplates"
  FOR EACH ROW EXECUTE FUNCTION "FormTemplates_refuse_change"();

-- One row per HUMAN task attempt, shown in the inbox. Not hot, so it keeps its
-- foreign keys to platform tables; it has none to "TaskExecutions" or
-- "WorkflowExecutions", whose keys include a hash/range partition column and
-- whose history is pruned by dropping partitions that an FK would pin.
CREATE TABLE "HumanTasks" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "workflowId" UUID NOT NULL,
  -- The TaskExecutions attempt this stands for. Unique: the executor creating
  -- it is re-run after crashes and must land on the same row (ON CONFLICT).
  "taskId" UUID NOT NULL UNIQUE,
  "refName" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "description" TEXT,
  "formTemplateId" UUID REFERENCES "FormTemplates" ("id"),
  "assigneeUserId" UUID REFERENCES "Users" ("id") ON DELETE SET NULL,
  "assigneeGroupId" UUID REFERENCES "Groups" ("id") ON DELETE SET NULL,
  "status" TEXT NOT NULL DEFAULT 'PENDING'
    CHECK ("status" IN ('PENDING', 'CLAIMED', 'COMPLETED', 'CANCELED', 'EXPIRED')),
  -- What the form is pre-filled with and shows.
  "input" JSONB NOT NULL DEFAULT '{}',
  -- The submitted form data; null until someone submits.
  "response" JSONB,
  "claimedByUserId" UUID REFERENCES "Users" ("id") ON DELETE SET NULL,
  "claimedAt" TIMESTAMPTZ,
  "completedByUserId" UUID REFERENCES "Users" ("id") ON DELETE SET NULL,
  "completedAt" TIMESTAMPTZ,
  "dueAt" TIMESTAMPTZ,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The inbox: open work newest first, per namespace, per user, per group.
CREATE INDEX "HumanTasks_inbox_idx" ON "HumanTasks" ("namespaceId", "status", "createdAt" DESC);
CREATE INDEX "HumanTasks_assignee_user_idx" ON "HumanTasks" ("assigneeUserId", "status")
  WHERE "assigneeUserId" IS NOT NULL;
CREATE INDEX "HumanTasks_assignee_group_idx" ON "HumanTasks" ("assigneeGroupId", "status")
  WHERE "assigneeGroupId" IS NOT NULL;
CREATE INDEX "HumanTasks_workflow_idx" ON "HumanTasks" ("workflowId");

-- Worker log lines (Conductor's POST /tasks/{taskId}/log). Append-only and
-- unpartitioned: volume is modest, and retention deletes by "at".
CREATE TABLE "TaskLogs" (
  "id" BIGSERIAL PRIMARY KEY,
  "namespaceId" UUID NOT NULL,
  "workflowId" UUID NOT NULL,
  "taskId" UUID NOT NULL,
  "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "line" TEXT NOT NULL
);
-- A task's log in order.
CREATE INDEX "TaskLogs_task_idx" ON "TaskLogs" ("taskId", "id");
-- BRIN for the retention delete: rows arrive in "at" order, so a BRIN index is a
-- few pages where a btree would grow with every line.
CREATE INDEX "TaskLogs_at_idx" ON "TaskLogs" USING BRIN ("at");
