-- Platform tables: namespaces, identity, definitions, secrets, audit.
--
-- Every identifier is double-quoted: Postgres folds unquoted names to lowercase,
-- and these tables are PascalCase with camelCase columns for real (there is no
-- CamelCasePlugin translating snake_case). An unquoted "queueName" silently
-- becomes queuename and the statement fails — or, in DDL, creates the wrong name.
--
-- Ids default to uuidv7() (Postgres 18): time-ordered, so btree inserts land at
-- the right edge instead of splitting pages all over the index.

CREATE TABLE "Namespaces" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  -- The name appears in URLs (/api/v1/ns/{ns}/…) and Conductor domains, so it is
  -- kept to a slug rather than escaped everywhere it is printed.
  "name" TEXT NOT NULL UNIQUE CHECK ("name" ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  "description" TEXT,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO "Namespaces" ("name", "description") VALUES ('default', 'Created by the first migration');

CREATE TABLE "Users" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "email" TEXT NOT NULL,
  "displayName" TEXT,
  -- Null for users who only sign in through an external identity provider.
  "passwordHash" TEXT,
  "isAdmin" BOOLEAN NOT NULL DEFAULT false,
  "disabledAt" TIMESTAMPTZ,
  "lastLoginAt" TIMESTAMPTZ,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Case-insensitive: Alice@x and alice@x are one person, and a second account for
-- the same mailbox is an account-takeover path, not a convenience.
CREATE UNIQUE INDEX "Users_email_idx" ON "Users" (lower("email"));

CREATE TABLE "Sessions" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "userId" UUID NOT NULL REFERENCES "Users" ("id") ON DELETE CASCADE,
  -- Only the hash is stored: a leaked table (or a backup) must not be a set of
  -- live cookies.
  "tokenHash" TEXT NOT NULL UNIQUE,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "expiresAt" TIMESTAMPTZ NOT NULL,
  "lastSeenAt" TIMESTAMPTZ,
  "userAgent" TEXT,
  "ipAddress" TEXT
);
CREATE INDEX "Sessions_user_idx" ON "Sessions" ("userId");
-- The expiry sweep deletes by this; without it every prune scans every session.
CREATE INDEX "Sessions_expires_idx" ON "Sessions" ("expiresAt");

CREATE TABLE "ServiceAccounts" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  "description" TEXT,
  "disabledAt" TIMESTAMPTZ,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  UNIQUE ("namespaceId", "name")
);

CREATE TABLE "ApiKeys" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  -- The non-secret leading part of the key, shown in the UI and used to find the
  -- row before the namespace is known (a worker presents only the key). Globally
  -- unique for that reason; the secret part is only ever compared by hash.
  "prefix" TEXT NOT NULL UNIQUE,
  "keyHash" TEXT NOT NULL,
  "scopes" TEXT[] NOT NULL DEFAULT '{}',
  "userId" UUID REFERENCES "Users" ("id") ON DELETE CASCADE,
  "serviceAccountId" UUID REFERENCES "ServiceAccounts" ("id") ON DELETE CASCADE,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "lastUsedAt" TIMESTAMPTZ,
  "expiresAt" TIMESTAMPTZ,
  -- Revocation is a timestamp, not a DELETE: "which key did this, and when was it
  -- revoked?" is asked after the fact, from the audit log.
  "revokedAt" TIMESTAMPTZ,
  -- A key acts for a user or for a service account, never for both.
  CHECK (num_nonnulls("userId", "serviceAccountId") <= 1)
);
CREATE INDEX "ApiKeys_namespace_idx" ON "ApiKeys" ("namespaceId");

CREATE TABLE "Groups" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  "description" TEXT,
  "roles" TEXT[] NOT NULL DEFAULT '{}',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE ("namespaceId", "name")
);

CREATE TABLE "GroupMembers" (
  "groupId" UUID NOT NULL REFERENCES "Groups" ("id") ON DELETE CASCADE,
  "userId" UUID NOT NULL REFERENCES "Users" ("id") ON DELETE CASCADE,
  "addedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("groupId", "userId")
);
-- "Which groups is this user in?" runs on every authorization; the PK only
-- answers the other direction.
CREATE INDEX "GroupMembers_user_idx" ON "GroupMembers" ("userId");

-- Append-only by construction. There is no update and no delete in the
-- repository, and the trigger below refuses both: an audit log with an edit path
-- is one nobody can rely on. Retention is a dropped monthly partition (84 kept),
-- which never rewrites a surviving row. No foreign key to Namespaces: the record
-- of who deleted a namespace must outlive the namespace.
CREATE TABLE "AuditEvents" (
  "id" UUID NOT NULL DEFAULT uuidv7(),
  "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Null for cluster-level actions (sign-in, creating a namespace).
  "namespaceId" UUID,
  "actorType" TEXT NOT NULL CHECK ("actorType" IN ('user', 'serviceAccount', 'apiKey', 'system')),
  "actorId" TEXT,
  "action" TEXT NOT NULL,
  "resourceType" TEXT,
  "resourceId" TEXT,
  -- Written from an explicit column selection by the repository, never a row
  -- spread: password, token and key hashes and sealed secrets must never land here.
  "details" JSONB NOT NULL DEFAULT '{}',
  "ipAddress" TEXT,
  -- A primary key on a partitioned table must include the partition key.
  PRIMARY KEY ("id", "at")
) PARTITION BY RANGE ("at");
CREATE INDEX "AuditEvents_namespace_at_idx" ON "AuditEvents" ("namespaceId", "at" DESC, "id" DESC);
CREATE INDEX "AuditEvents_resource_idx" ON "AuditEvents" ("resourceType", "resourceId", "at" DESC)
  WHERE "resourceId" IS NOT NULL;

CREATE FUNCTION "AuditEvents_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'AuditEvents is append-only: % refused', TG_OP
    USING ERRCODE = 'integrity_constraint_violation',
          HINT = 'Retention drops whole partitions; rows are never updated or deleted.';
END;
$$;
-- Declared on the parent so it reaches every partition, including ones the
-- partition manager creates later. TRUNCATE and DROP (retention) are unaffected.
CREATE TRIGGER "AuditEvents_append_only"
  BEFORE UPDATE OR DELETE ON "AuditEvents"
  FOR EACH ROW EXECUTE FUNCTION "AuditEvents_refuse_change"();

-- Immutable per (namespace, name, version): saving makes a new version. The
-- blueprint (compiled successors/predecessors and, per node, the refs its
-- expressions read) is stored beside the graph, which is why an LRU blueprint
-- cache keyed on (name, version) never needs invalidating and why an edit can
-- never change what a running execution does.
CREATE TABLE "WorkflowDefinitions" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  "version" INTEGER NOT NULL CHECK ("version" >= 1),
  "description" TEXT,
  "graph" JSONB NOT NULL,
  "blueprint" JSONB NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  -- Hiding a version from pickers is allowed; changing what it does is not.
  "archivedAt" TIMESTAMPTZ,
  -- Also answers "latest version of name" as a backward index scan.
  UNIQUE ("namespaceId", "name", "version")
);

CREATE FUNCTION "WorkflowDefinitions_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- IS DISTINCT FROM on jsonb compares values, so re-saving identical JSON with
  -- different key order or whitespace is not a change.
  IF NEW."graph" IS DISTINCT FROM OLD."graph"
     OR NEW."blueprint" IS DISTINCT FROM OLD."blueprint"
     OR NEW."name" IS DISTINCT FROM OLD."name"
     OR NEW."version" IS DISTINCT FROM OLD."version"
     OR NEW."namespaceId" IS DISTINCT FROM OLD."namespaceId" THEN
    RAISE EXCEPTION 'Workflow definition "%" version % is immutable: save a new version instead', OLD."name", OLD."version"
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$;
-- A trigger and not only repository discipline: a blueprint cached by (name,
-- version) in every decider would silently disagree with an edited row.
CREATE TRIGGER "WorkflowDefinitions_immutable"
  BEFORE UPDATE ON "WorkflowDefinitions"
  FOR EACH ROW EXECUTE FUNCTION "WorkflowDefinitions_refuse_change"();

-- Mutable, as in Conductor. Every Conductor TaskDef field the API accepts has a
-- column: a field that is validated and returned but has nowhere to be stored
-- is silently dropped on write (how secretOutputFields was once lost).
CREATE TABLE "TaskDefinitions" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL,
  "description" TEXT,
  "ownerEmail" TEXT,
  "retryCount" INTEGER NOT NULL DEFAULT 3 CHECK ("retryCount" >= 0),
  "retryLogic" TEXT NOT NULL DEFAULT 'FIXED'
    CHECK ("retryLogic" IN ('FIXED', 'EXPONENTIAL_BACKOFF', 'LINEAR_BACKOFF')),
  "retryDelaySeconds" INTEGER NOT NULL DEFAULT 60 CHECK ("retryDelaySeconds" >= 0),
  "backoffScaleFactor" INTEGER NOT NULL DEFAULT 1 CHECK ("backoffScaleFactor" >= 1),
  "timeoutPolicy" TEXT NOT NULL DEFAULT 'TIME_OUT_WF'
    CHECK ("timeoutPolicy" IN ('RETRY', 'TIME_OUT_WF', 'ALERT_ONLY')),
  -- 0 means no overall limit, as in Conductor.
  "timeoutSeconds" INTEGER NOT NULL DEFAULT 0 CHECK ("timeoutSeconds" >= 0),
  "totalTimeoutSeconds" INTEGER NOT NULL DEFAULT 0 CHECK ("totalTimeoutSeconds" >= 0),
  "responseTimeoutSeconds" INTEGER NOT NULL DEFAULT 3600 CHECK ("responseTimeoutSeconds" >= 1),
  "pollTimeoutSeconds" INTEGER CHECK ("pollTimeoutSeconds" >= 0),
  "concurrentExecLimit" INTEGER CHECK ("concurrentExecLimit" >= 0),
  "rateLimitPerFrequency" INTEGER CHECK ("rateLimitPerFrequency" >= 0),
  "rateLimitFrequencyInSeconds" INTEGER CHECK ("rateLimitFrequencyInSeconds" >= 1),
  "inputKeys" TEXT[] NOT NULL DEFAULT '{}',
  "outputKeys" TEXT[] NOT NULL DEFAULT '{}',
  "inputTemplate" JSONB NOT NULL DEFAULT '{}',
  "inputSchema" JSONB,
  "outputSchema" JSONB,
  -- Output fields masked in the UI, logs and events.
  "secretOutputFields" TEXT[] NOT NULL DEFAULT '{}',
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);

CREATE TABLE "Secrets" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  -- Referenced from expressions as ${workflow.secrets.NAME}, so it must be a
  -- plain identifier.
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$'),
  "description" TEXT,
  -- Sealed (encrypted) by the server; plaintext never reaches the database.
  "sealedValue" BYTEA NOT NULL,
  -- Which sealing key wrote it, so the key can rotate without a flag day.
  "keyVersion" INTEGER NOT NULL DEFAULT 1,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);

-- Seed the current and next month of AuditEvents (plus DEFAULT). The names and
-- bounds follow the convention shared with server/store/partition-manager.ts
-- exactly ("<Table>_pYYYYMM", [first of month 00:00 UTC, first of next month)):
-- a mismatch would make the manager's CREATE overlap ours (42P17) forever.
-- Without a seeded current period every row would land in DEFAULT, and Postgres
-- then refuses to create that period's partition over the orphaned rows.
CREATE TABLE "AuditEvents_default" PARTITION OF "AuditEvents" DEFAULT;

DO $$
DECLARE
  -- Month arithmetic is done on UTC wall-clock `timestamp` values, never on
  -- timestamptz: timestamptz + '1 month' steps in the session's TimeZone, which
  -- in e.g. America/New_York lands an hour off the UTC month boundary.
  "monthStart" timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
  "lo" timestamp;
  "hi" timestamp;
BEGIN
  FOR "i" IN 0..1 LOOP
    "lo" := "monthStart" + make_interval(months => "i");
    "hi" := "lo" + interval '1 month';
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
      'AuditEvents_p' || to_char("lo", 'YYYYMM'), 'AuditEvents',
      to_char("lo", 'YYYY-MM-DD HH24:MI:SS') || '+00', to_char("hi", 'YYYY-MM-DD HH24:MI:SS') || '+00');
  END LOOP;
END;
$$;
