import { sql } from "kysely";
import type { Db } from "../db/pool";
import { DECIDE_CHANNEL } from "./notifier";

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
  const state = states.get(db) ?? { inFlight: false, again: false };
  states.set(db, state);
  if (state.inFlight) {
    state.again = true;
    return;
  }
  state.inFlight = true;
  const send = (): void => {
    state.again = false;
    void sql`SELECT pg_notify(${DECIDE_CHANNEL}, 'wake')`
      .execute(db)
      .catch(() => undefined)
      .finally(() => {
        if (state.again) send();
        else state.inFlight = false;
      });
  };
  send();
}

const states = new WeakMap<Db, { inFlight: boolean; again: boolean }>();
