import type { BackgroundRunner } from "./background-runner";
import { DECIDE_CHANNEL, DECIDE_WAKE_KEY, OUTBOX_CHANNEL, OUTBOX_WAKE_KEY, SYSTEM_TASKS_CHANNEL, SYSTEM_TASKS_WAKE_KEY } from "../lib/notifier";
import type { Notifier, NotifierChannel } from "../lib/notifier";

/**
 * Which notification wakes which of the sidecar's loops at once; the loop's
 * interval still covers whatever the notifier misses (invariant 7).
 */
const WAKES: readonly { runner: string; channel: NotifierChannel; key: string }[] = [
  // A decide requested anywhere: a completion, a start, a timer (the DecideQueues trigger, or a report's wake).
  { runner: "decide", channel: DECIDE_CHANNEL, key: DECIDE_WAKE_KEY },
  // A system task (INLINE, HTTP, JSON_JQ_TRANSFORM, EVENT) queued and due: store/task-queues.ts.
  { runner: "system-tasks", channel: SYSTEM_TASKS_CHANNEL, key: SYSTEM_TASKS_WAKE_KEY },
  // An event written to the outbox (an EVENT task's): store/outbox-events.ts.
  { runner: "outbox", channel: OUTBOX_CHANNEL, key: OUTBOX_WAKE_KEY },
];

/**
 * Subscribes the wakes of the loops this process holds, on a notifier made for
 * their channels alone (every notification on a channel reaches every session
 * listening to it). Undefined when the process holds none of those loops. The
 * caller starts and closes the notifier.
 */
export function listenForRunnerWakes(
  runners: readonly BackgroundRunner[],
  createNotifier: (channels: readonly NotifierChannel[]) => Notifier,
): Notifier | undefined {
  const wakes = WAKES.flatMap((wake) => {
    const runner = runners.find((candidate) => candidate.name === wake.runner);
    return runner === undefined ? [] : [{ ...wake, runner }];
  });
  if (wakes.length === 0) return undefined;
  const notifier = createNotifier(wakes.map((wake) => wake.channel));
  // A resync (a reconnect: anything may have been missed) wakes each loop too.
  for (const { channel, key, runner } of wakes) notifier.subscribe(channel, key, () => runner.wake());
  return notifier;
}
