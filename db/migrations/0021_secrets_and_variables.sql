-- Environment variables, and which workers may be handed secrets.
--
-- A namespace's variables are plain, readable configuration that task input
-- reads as ${workflow.env.NAME}; its secrets (the "Secrets" table, sealed) are
-- read as ${workflow.secrets.NAME}. Both are resolved when a task is
-- dispatched (server/secrets/dispatch-input.ts), never when it is scheduled,
-- so the stored input keeps the reference (or "***" for a secret).

CREATE TABLE "EnvironmentVariables" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  -- Referenced from expressions as ${workflow.env.NAME}: a plain identifier, as secret names are.
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
  "value" TEXT NOT NULL CHECK (octet_length("value") <= 65536),
  "description" TEXT,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);

-- A worker task's input reads "***" where it names a secret unless its task
-- definition opts in: the worker is then trusted with the value.
ALTER TABLE "TaskDefinitions" ADD COLUMN "allowSecrets" BOOLEAN NOT NULL DEFAULT false;
