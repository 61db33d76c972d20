import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database, IdempotencyStrategy } from "../../db/schema";

export interface ClaimIdempotencyKeyInput {
  namespaceId: string;
  key: string;
  /** The execution this start will create (its id chosen before the insert). */
  workflowId: string;
  strategy: IdempotencyStrategy;
  /** When the key may be claimed again; null or omitted: never. */
  expiresAt?: Date | string | null;
}

export type ClaimIdempotencyKeyResult = { claimed: true } | { claimed: false; existingWorkflowId: string };

/**
 * The claim's INSERT, returning the key's row ("workflowId") only when this
 * claim won it — a new key, or an expired one taken over — and nothing when
 * another holds it. For a statement that does more: start-execution.ts claims
 * the key in the statement that inserts the execution.
 */
export function claimIdempotencyKeyQuery(db: Kysely<Database>, input: ClaimIdempotencyKeyInput) {
  return (
    db
      .insertInto("IdempotencyKeys")
      .values({
        namespaceId: input.namespaceId,
        key: input.key,
        workflowId: input.workflowId,
        strategy: input.strategy,
        expiresAt: input.expiresAt ?? null,
      })
      // ON CONFLICT is the arbiter, not a read-then-insert: two concurrent claims
      // both see "no row" under a read, whereas here the second blocks on the
      // first's uncommitted index entry and resolves once it commits or aborts.
      // DO UPDATE … WHERE expired (rather than DO NOTHING) lets an expired key be
      // claimed again before the pruner deletes it; when the WHERE is false it
      // returns nothing, exactly like DO NOTHING. RETURNING yields a row only to
      // the winner.
      .onConflict((oc) =>
        oc
          .columns(["namespaceId", "key"])
          .doUpdateSet((eb) => ({
            workflowId: eb.ref("excluded.workflowId"),
            strategy: eb.ref("excluded.strategy"),
            createdAt: sql<Date>`now()`,
            expiresAt: eb.ref("excluded.expiresAt"),
          }))
          .where("IdempotencyKeys.expiresAt", "is not", null)
          .where("IdempotencyKeys.expiresAt", "<=", sql<Date>`now()`),
      )
      .returning("workflowId")
  );
}

/**
 * Claims `key` for `workflowId`, or reports who holds it. Call it in the same
 * transaction that inserts the execution, so a rolled-back start releases the key.
 *
 * The guarantee is the primary key of the *unpartitioned* "IdempotencyKeys": a
 * unique index on the partitioned "WorkflowExecutions" would have to include
 * "startedAt", which differs on every insert, and so would never conflict.
 */
export async function claimIdempotencyKey(
  db: Kysely<Database>,
  input: ClaimIdempotencyKeyInput,
): Promise<ClaimIdempotencyKeyResult> {
  // Rarely more than one round: the follow-up read misses only if the holder's
  // key was pruned (or expired, re-claimed and rolled back) in between, and then
  // the next INSERT either wins or meets a newer holder.
  for (let round = 0; round < 3; round++) {
    const inserted = await claimIdempotencyKeyQuery(db, input).executeTakeFirst();
    if (inserted) return { claimed: true };

    // Lost: read the holder. Under READ COMMITTED this statement takes a fresh
    // snapshot, so it sees the winner's commit that the INSERT waited for.
    const existing = await db
      .selectFrom("IdempotencyKeys")
      .select("workflowId")
      .where("namespaceId", "=", input.namespaceId)
      .where("key", "=", input.key)
      .executeTakeFirst();
    if (existing) return { claimed: false, existingWorkflowId: existing.workflowId };
  }
  throw new Error(`Idempotency key "${input.key}" kept changing hands while being claimed`);
}
