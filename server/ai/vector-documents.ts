import { sql } from "kysely";
import type { Db } from "@/db/pool";

/**
 * The VectorDocuments table (migration 0032): chunks of indexed text with
 * their embeddings as real[], per node-flow namespace, Conductor index and
 * index namespace. Search ranks by cosine similarity — pgvector's `<=>` on a
 * cast when the extension is installed in the database, the SQL function
 * node_flow_cosine_similarity otherwise; both compute the same value, so the
 * ranking is the same either way. Only chunks embedded by the query's model,
 * with as many dimensions, are compared.
 */

export interface IndexAddress {
  namespaceId: string;
  indexName: string;
  /** Conductor's `namespace` input: a partition inside the index. */
  indexNamespace: string;
}

export interface IndexedChunk {
  text: string;
  embedding: number[];
}

export interface SearchHit {
  docId: string;
  chunk: number;
  text: string;
  metadata: unknown;
  score: number;
}

/** Replaces every chunk of `docId` with `chunks`, in one transaction: a document is never half indexed. */
export async function replaceDocumentChunks(
  db: Db,
  address: IndexAddress,
  doc: { docId: string; metadata: Record<string, unknown>; embeddingModel: string; chunks: readonly IndexedChunk[] },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom("VectorDocuments")
      .where("namespaceId", "=", address.namespaceId)
      .where("indexName", "=", address.indexName)
      .where("indexNamespace", "=", address.indexNamespace)
      .where("docId", "=", doc.docId)
      .execute();
    if (doc.chunks.length === 0) return;
    await trx
      .insertInto("VectorDocuments")
      .values(
        doc.chunks.map((c, i) => ({
          namespaceId: address.namespaceId,
          indexName: address.indexName,
          indexNamespace: address.indexNamespace,
          docId: doc.docId,
          chunk: i,
          text: c.text,
          metadata: JSON.stringify(doc.metadata),
          embedding: c.embedding,
          embeddingModel: doc.embeddingModel,
        })),
      )
      .execute();
  });
}

/** Whether this database has pgvector installed (asked once per pool). */
const pgvectorByDb = new WeakMap<Db, Promise<boolean>>();

export function hasPgvector(db: Db): Promise<boolean> {
  let known = pgvectorByDb.get(db);
  if (known === undefined) {
    known = sql<{ present: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS present`.execute(db).then((r) => r.rows[0]?.present === true);
    known.catch(() => pgvectorByDb.delete(db));
    pgvectorByDb.set(db, known);
  }
  return known;
}

/**
 * The `limit` chunks closest to `embedding`, best first (ties by document
 * and chunk), among those whose metadata contains `metadataFilter`.
 * `engine` forces one implementation (the tests compare them); by default
 * pgvector when present.
 */
export async function searchChunks(
  db: Db,
  address: IndexAddress,
  query: { embedding: number[]; embeddingModel: string; limit: number; metadataFilter?: Record<string, unknown>; engine?: "pgvector" | "sql" },
): Promise<SearchHit[]> {
  const engine = query.engine ?? ((await hasPgvector(db)) ? "pgvector" : "sql");
  const vector = sql`${query.embedding}::real[]`;
  const score =
    engine === "pgvector"
      ? sql<number>`(1 - ("embedding"::vector <=> ${vector}::vector))::float8`
      : sql<number>`"node_flow_cosine_similarity"("embedding", ${vector})`;
  const result = await sql<{ docId: string; chunk: number; text: string; metadata: unknown; score: number }>`
    SELECT "docId", "chunk", "text", "metadata", ${score} AS "score"
    FROM "VectorDocuments"
    WHERE "namespaceId" = ${address.namespaceId}
      AND "indexName" = ${address.indexName}
      AND "indexNamespace" = ${address.indexNamespace}
      AND "embeddingModel" = ${query.embeddingModel}
      AND cardinality("embedding") = ${query.embedding.length}
      ${query.metadataFilter === undefined ? sql`` : sql`AND "metadata" @> ${JSON.stringify(query.metadataFilter)}::jsonb`}
    ORDER BY "score" DESC, "docId", "chunk"
    LIMIT ${query.limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, score: Number(r.score) }));
}

/**
 * Splits text into chunks of at most `size` characters, neighbours sharing
 * `overlap`, cutting at the last paragraph, line, sentence or word break in
 * the second half of a chunk when there is one. Empty text gives no chunks.
 */
export function chunkText(text: string, size: number, overlap: number): string[] {
  const chunks: string[] = [];
  const clean = text.trim();
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(clean.length, start + size);
    if (end < clean.length) {
      const window = clean.slice(start, end);
      const cut = Math.max(window.lastIndexOf("\n\n"), window.lastIndexOf("\n"), window.lastIndexOf(". "), window.lastIndexOf(" "));
      if (cut > size / 2) end = start + cut + 1;
    }
    const piece = clean.slice(start, end).trim();
    if (piece !== "") chunks.push(piece);
    if (end >= clean.length) break;
    start = Math.max(start + 1, end - overlap);
  }
  return chunks;
}
