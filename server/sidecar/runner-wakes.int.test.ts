import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../db/testing/test-database";
import { BackgroundRunner } from "./background-runner";
import { DECIDE_CHANNEL, Notifier, OUTBOX_CHANNEL, SYSTEM_TASKS_CHANNEL, TASKS_CHANNEL } from "../lib/notifier";
import type { NotifierChannel } from "../lib/notifier";
import { listenForRunnerWakes } from "./runner-wakes";
import { waitUntil } from "../testing/wait-until";

const t = useTestDatabase();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loop that counts its passes, with an interval no test waits out: only a wake runs it. */
function countingRunner(name: string): { runner: BackgroundRunner; passes: () => number } {
  let passes = 0;
  const runner = new BackgroundRunner({ name, intervalMs: 3_600_000, runAtStart: false, run: () => {
      passes += 1;
      return Promise.resolve(0);
    },
  });
  runner.start();
  cleanups.push(() => runner.stop());
  return { runner, passes: () => passes };
}

const notify = (channel: string, payload: string) => sql`SELECT pg_notify(${channel}, ${payload})`.execute(t.db);

describe("listenForRunnerWakes", () => {
  it("wakes the decide loop on a decide request, the system-task loop on a queued system task and the relay on an event, each alone", async () => {
    const decide = countingRunner("decide");
    const systemTasks = countingRunner("system-tasks");
    const outbox = countingRunner("outbox");
    const timers = countingRunner("timers");
    let listened: readonly NotifierChannel[] = [];
    const notifier = listenForRunnerWakes([decide.runner, systemTasks.runner, outbox.runner, timers.runner], (channels) => {
      listened = channels;
      return new Notifier({ connectionString: t.url, channels });
    });
    if (notifier === undefined) throw new Error("no notifier for a process holding the decide and system-task loops");
    cleanups.push(() => notifier.close());
    await notifier.start();
    expect(listened).toEqual([DECIDE_CHANNEL, SYSTEM_TASKS_CHANNEL, OUTBOX_CHANNEL]);
    // The connect's resync woke each once; count from here.
    await waitUntil(() => decide.passes() === 1 && systemTasks.passes() === 1 && outbox.passes() === 1, { what: "the resync's passes", timeoutMs: 5_000 });

    await notify(SYSTEM_TASKS_CHANNEL, "wake");
    await waitUntil(() => systemTasks.passes() === 2, { what: "a system-task pass", timeoutMs: 5_000 });
    await notify(DECIDE_CHANNEL, "wake");
    await waitUntil(() => decide.passes() === 2, { what: "a decide pass", timeoutMs: 5_000 });
    await notify(OUTBOX_CHANNEL, "wake");
    await waitUntil(() => outbox.passes() === 2, { what: "a relay pass", timeoutMs: 5_000 });
    // A worker queue's notification is not the sidecar's to hear.
    await notify(TASKS_CHANNEL, "ns:orders");
    await notify(DECIDE_CHANNEL, "wake");
    await waitUntil(() => decide.passes() === 3, { what: "the marker's decide pass", timeoutMs: 5_000 });
    expect([decide.passes(), systemTasks.passes(), outbox.passes(), timers.passes()]).toEqual([3, 2, 2, 0]);
  });

  it("makes no notifier for a process that holds none of those loops", () => {
    const timers = countingRunner("timers");
    expect(
      listenForRunnerWakes([timers.runner], () => {
        throw new Error("no notifier wanted");
      }),
    ).toBeUndefined();
  });
});
