import { sql } from "kysely";
import type { RawBuilder } from "kysely";
import type { Db } from "../../db/pool";
import { DECIDE_CHANNEL } from "../lib/notifier";

/**
 * Wakes the deciders after a worker's report has committed ("nf_report_task"
 * leaves the wake to its caller: migration 0014 says why). The NOTIFY goes in a
 * transaction of its own that writes nothing, so it holds Postgres's notify
 * lock for no WAL flush; and at most one is in flight per database handle:
 * reports that commit while one is on its way are covered by one more sent
 * after it, so under load the deciders get a wake per round trip, not per
 * report. The payload is the trigger's ('wake'), so Postgres folds it with any
 * other writer's in the same transaction.
 *
 * Never throws: a wake that fails is logged by nobody and costs the decide
 * loop's interval at most (invariant 7) — the report itself has committed.
 */
export function wakeDeciders(db: Db): void {
  const state = stateOf(db);
  if (state.inFlight) {
    state.again = true;
    return;
  }
  state.inFlight = true;
  sendWake(db, state);
}

/**
 * The wake to send in a report's own round trip, right behind it
 * (db/pipeline.ts): Postgres runs it once the report's statement has
 * committed, so the deciders hear of the report without a round trip back to
 * this process and out again. Undefined when a wake is already in flight: the
 * caller then calls {@link wakeDeciders} once its report has committed, as
 * before. Otherwise the caller must call `answered` once the wake's answer is
 * in (whatever the report's outcome: a refused report's wake wakes the
 * deciders for nothing, which costs them a claim that finds nothing).
 */
export function wakeWithReport(db: Db): { statement: RawBuilder<unknown>; answered: () => void } | undefined {
  const state = stateOf(db);
  if (state.inFlight) return undefined;
  state.inFlight = true;
  state.again = false;
  return { statement: wakeStatement(), answered: () => afterWake(db, state) };
}

interface WakeState {
  inFlight: boolean;
  again: boolean;
}

const states = new WeakMap<Db, WakeState>();

function stateOf(db: Db): WakeState {
  let state = states.get(db);
  if (state === undefined) states.set(db, (state = { inFlight: false, again: false }));
  return state;
}

const wakeStatement = () => sql`SELECT pg_notify(${DECIDE_CHANNEL}, 'wake')`;

function sendWake(db: Db, state: WakeState): void {
  state.again = false;
  void wakeStatement()
    .execute(db)
    .catch(() => undefined)
    .finally(() => afterWake(db, state));
}

/** A wake's answer is in: one more for the reports that committed meanwhile, or none in flight. */
function afterWake(db: Db, state: WakeState): void {
  if (state.again) sendWake(db, state);
  else state.inFlight = false;
}
