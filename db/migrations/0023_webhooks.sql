-- Inbound webhooks: an endpoint per (namespace, name) that starts a workflow
-- from a sender's HTTP call, and a record of every call made to it.

CREATE TABLE "IncomingWebhooks" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  -- The last segment of POST /api/hooks/{namespace}/{name}: a slug, like namespace names.
  "name" TEXT NOT NULL CHECK ("name" ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  "description" TEXT,
  "workflowName" TEXT NOT NULL,
  -- Null: the latest version at each call.
  "workflowVersion" INTEGER CHECK ("workflowVersion" >= 1),
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  -- token: the secret's value in a header. hmac-sha256: GitHub's shape, a hex
  -- HMAC of the raw body ("sha256=" optional). hmac-sha256-timestamped:
  -- Stripe's, "t=<unix>,v1=<hex>" over "<t>.<body>", within a tolerance.
  "authMode" TEXT NOT NULL CHECK ("authMode" IN ('token', 'hmac-sha256', 'hmac-sha256-timestamped')),
  -- A namespace secret (Secrets.name): rotating or deleting it refuses the next call.
  "secretName" TEXT NOT NULL,
  "authHeader" TEXT NOT NULL CHECK ("authHeader" ~ '^[a-z0-9-]{1,100}$'),
  "toleranceSeconds" INTEGER NOT NULL DEFAULT 300 CHECK ("toleranceSeconds" BETWEEN 1 AND 86400),
  -- A template over { body, headers, query }, resolved like task input.
  "inputMapping" JSONB NOT NULL,
  "correlationIdTemplate" TEXT,
  "idempotencyKeyTemplate" TEXT,
  "responseMode" TEXT NOT NULL DEFAULT 'accepted' CHECK ("responseMode" IN ('accepted', 'wait')),
  "waitSeconds" INTEGER NOT NULL DEFAULT 10 CHECK ("waitSeconds" BETWEEN 1 AND 30),
  -- In wait mode, answer with this node's output rather than the run's.
  "responseNodeRef" TEXT,
  "allowGet" BOOLEAN NOT NULL DEFAULT false,
  "maxBodyBytes" INTEGER NOT NULL DEFAULT 1048576 CHECK ("maxBodyBytes" BETWEEN 1 AND 10485760),
  "ratePerMinute" INTEGER NOT NULL DEFAULT 600 CHECK ("ratePerMinute" BETWEEN 1 AND 60000),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);
CREATE INDEX "IncomingWebhooks_workflow_idx" ON "IncomingWebhooks" ("namespaceId", "workflowName");

-- One row per call, accepted or refused. Never the secret, the auth header or
-- the body: a digest of a timestamped signature (to refuse its replay), sizes,
-- the outcome and the run it started.
CREATE TABLE "WebhookCallbacks" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "webhookId" UUID NOT NULL REFERENCES "IncomingWebhooks" ("id") ON DELETE CASCADE,
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "receivedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "method" TEXT NOT NULL,
  "status" INTEGER NOT NULL,
  "workflowId" UUID,
  -- Why it was refused, for the console; the caller is told less.
  "refusal" TEXT,
  "signatureDigest" TEXT,
  "idempotencyKey" TEXT,
  "bodyBytes" INTEGER NOT NULL DEFAULT 0,
  "durationMs" INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX "WebhookCallbacks_webhook_idx" ON "WebhookCallbacks" ("webhookId", "receivedAt" DESC, "id" DESC);
CREATE UNIQUE INDEX "WebhookCallbacks_signature_idx" ON "WebhookCallbacks" ("webhookId", "signatureDigest") WHERE "signatureDigest" IS NOT NULL;
