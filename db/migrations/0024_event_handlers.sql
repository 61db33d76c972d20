-- Event handlers (Conductor's model): on an event, when a condition holds,
-- run actions — start a workflow, complete or fail a waiting task, terminate
-- a workflow, update a workflow's variables. EventExecutions records what
-- each handler did with each event.

CREATE TABLE "EventHandlers" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z0-9_.-]{1,200}$'),
  "description" TEXT,
  -- e.g. conductor:<workflow name>:<queue>, the topic an EVENT task publishes.
  "event" TEXT NOT NULL CHECK (length("event") BETWEEN 1 AND 500),
  -- A JavaScript expression over the payload ($); null: always.
  "condition" TEXT,
  "evaluatorType" TEXT NOT NULL DEFAULT 'javascript',
  "actions" JSONB NOT NULL,
  "active" BOOLEAN NOT NULL DEFAULT false,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);
CREATE INDEX "EventHandlers_event_idx" ON "EventHandlers" ("namespaceId", "event") WHERE "active";

-- One row per (handler, event): a redelivered event finds it and runs nothing twice.
CREATE TABLE "EventExecutions" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "handlerId" UUID NOT NULL REFERENCES "EventHandlers" ("id") ON DELETE CASCADE,
  "eventId" BIGINT NOT NULL,
  "event" TEXT NOT NULL,
  -- COMPLETED: every action ran; SKIPPED: the condition was false; FAILED: an action or the condition failed.
  "status" TEXT NOT NULL CHECK ("status" IN ('COMPLETED', 'SKIPPED', 'FAILED')),
  -- Per action: what it was, whether it succeeded, the workflow it acted on or started, why it failed.
  "outcomes" JSONB NOT NULL DEFAULT '[]',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE ("handlerId", "eventId")
);
CREATE INDEX "EventExecutions_handler_idx" ON "EventExecutions" ("handlerId", "createdAt" DESC);
