-- AI tasks (docs/ai.md): a namespace's model providers, and the documents the
-- LLM_INDEX_TEXT task indexes and LLM_SEARCH_INDEX searches.

-- A named model provider, as Conductor's integrations name them: a task says
-- "llmProvider": "<name>". The API key is never here: "apiKeySecret" names a
-- namespace secret (the "Secrets" table, sealed), opened only when a task
-- calls the provider.
CREATE TABLE "AiProviders" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  "name" TEXT NOT NULL CHECK ("name" ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  -- openai: any server speaking OpenAI's chat/completions/embeddings API
  -- (OpenAI, Ollama, vLLM, LM Studio, a gateway); anthropic: the Messages API.
  "kind" TEXT NOT NULL CHECK ("kind" IN ('openai', 'anthropic')),
  "baseUrl" TEXT NOT NULL CHECK ("baseUrl" ~ '^https?://'),
  "apiKeySecret" TEXT,
  -- The models a task may name; at least one.
  "models" TEXT[] NOT NULL CHECK (cardinality("models") BETWEEN 1 AND 200),
  -- Lets the tasks reach this provider's host on a loopback or private
  -- address (a local Ollama) without opening the whole network policy.
  "allowPrivateNetwork" BOOLEAN NOT NULL DEFAULT false,
  "description" TEXT,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "createdBy" TEXT,
  "updatedAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedBy" TEXT,
  UNIQUE ("namespaceId", "name")
);

-- One chunk of an indexed document. Embeddings are real[] so retrieval works
-- on a stock Postgres: pgvector, when installed, is used by casting at query
-- time (server/ai/vector-documents.ts), never required by a column type.
CREATE TABLE "VectorDocuments" (
  "id" UUID PRIMARY KEY DEFAULT uuidv7(),
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id"),
  -- Conductor's "index" and "namespace" inputs (the latter is not a node-flow namespace).
  "indexName" TEXT NOT NULL CHECK (length("indexName") BETWEEN 1 AND 200),
  "indexNamespace" TEXT NOT NULL DEFAULT '' CHECK (length("indexNamespace") <= 200),
  "docId" TEXT NOT NULL CHECK (length("docId") BETWEEN 1 AND 400),
  "chunk" INTEGER NOT NULL CHECK ("chunk" >= 0),
  "text" TEXT NOT NULL,
  "metadata" JSONB NOT NULL DEFAULT '{}',
  "embedding" REAL[] NOT NULL CHECK (cardinality("embedding") BETWEEN 1 AND 16000),
  "embeddingModel" TEXT NOT NULL,
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE ("namespaceId", "indexName", "indexNamespace", "docId", "chunk")
);

-- Cosine similarity of two equally long vectors, in double precision; 0 when
-- either is all zeros. What search ranks by when pgvector is absent.
CREATE FUNCTION "node_flow_cosine_similarity"(a REAL[], b REAL[]) RETURNS DOUBLE PRECISION
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN s.na = 0 OR s.nb = 0 THEN 0 ELSE s.dot / (sqrt(s.na) * sqrt(s.nb)) END
  FROM (SELECT sum(x::float8 * y::float8) AS dot, sum(x::float8 * x::float8) AS na, sum(y::float8 * y::float8) AS nb
        FROM unnest(a, b) AS v(x, y)) s
$$;

-- pgvector when the server has it and we may create it; otherwise nothing
-- changes and search uses the function above.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is installed but this role may not create it: vector search uses node_flow_cosine_similarity';
    END;
  END IF;
END
$$;
