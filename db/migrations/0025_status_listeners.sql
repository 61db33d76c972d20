-- A workflow's status change as an event: for status listeners (a URL called
-- on each change, signed with a namespace secret) and for event handlers
-- listening to workflow:<name>:<STATUS>. Written by a trigger in the
-- transaction that changes the status — whichever path changes it (the
-- decider, an operator action, a sweep) — so an event exists exactly when the
-- change commits. The outbox relay delivers it afterwards, at least once.

CREATE TABLE "StatusListeners" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z0-9_.-]{1,200}$'),
  -- Null: every workflow of the namespace.
  "workflowName" TEXT,
  "statuses" TEXT[] NOT NULL DEFAULT '{COMPLETED,FAILED,TERMINATED,TIMED_OUT}',
  "url" TEXT NOT NULL CHECK ("url" ~ '^https?://'),
  -- A namespace secret (Secrets.name) the call is signed with; null: unsigned.
  "secretName" TEXT,
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);
CREATE INDEX "StatusListeners_namespace_idx" ON "StatusListeners" ("namespaceId") WHERE "enabled";

-- One plpgsql call per status change (the WHEN clause keeps other updates of
-- the hot row from calling it), two index probes that find nothing in a
-- namespace with neither listeners nor handlers: no row, no WAL.
CREATE FUNCTION "WorkflowExecutions_status_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload JSONB;
  topic TEXT := 'workflow:' || NEW."defName" || ':' || NEW."status";
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "StatusListeners" l WHERE l."namespaceId" = NEW."namespaceId" AND l."enabled")
     AND NOT EXISTS (SELECT 1 FROM "EventHandlers" h WHERE h."namespaceId" = NEW."namespaceId" AND h."event" = topic AND h."active") THEN
    RETURN NULL;
  END IF;
  payload := jsonb_build_object(
    'workflowId', NEW."id",
    'workflowType', NEW."defName",
    'version', NEW."defVersion",
    'status', NEW."status",
    'previousStatus', CASE WHEN TG_OP = 'UPDATE' THEN OLD."status" END,
    'correlationId', NEW."correlationId",
    'reasonForIncompletion', NEW."reasonForIncompletion",
    'updateTime', (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  );
  INSERT INTO "OutboxEvents" ("namespaceId", "topic", "workflowId", "payload")
  SELECT NEW."namespaceId", 'status-listener:' || l."id", NEW."id", payload
  FROM "StatusListeners" l
  WHERE l."namespaceId" = NEW."namespaceId" AND l."enabled"
    AND (l."workflowName" IS NULL OR l."workflowName" = NEW."defName")
    AND NEW."status" = ANY (l."statuses");
  IF EXISTS (SELECT 1 FROM "EventHandlers" h WHERE h."namespaceId" = NEW."namespaceId" AND h."event" = topic AND h."active") THEN
    INSERT INTO "OutboxEvents" ("namespaceId", "topic", "workflowId", "payload") VALUES (NEW."namespaceId", topic, NEW."id", payload);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "WorkflowExecutions_status_changed"
  AFTER UPDATE OF "status" ON "WorkflowExecutions"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "WorkflowExecutions_status_events"();

CREATE TRIGGER "WorkflowExecutions_started"
  AFTER INSERT ON "WorkflowExecutions"
  FOR EACH ROW EXECUTE FUNCTION "WorkflowExecutions_status_events"();
