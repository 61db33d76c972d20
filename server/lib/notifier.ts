import pg from "pg";
import { FailureStreak, oneLine } from "./failure-streak";
import { OUTBOX_CHANNEL } from "../store/outbox-events";
import { SYSTEM_TASKS_CHANNEL, TASKS_CHANNEL } from "../store/task-queues";

/**
 * The process's one LISTEN connection, fanned out in process to waiters keyed
 * by channel and key.
 *
 * One channel per kind of event for the whole cluster, never one per queue or
 * per workflow: channel names are global, a busy install has thousands of
 * queues, and routing a payload to the right waiter in process is free.
 *
 * NOTIFY is an optimisation, never a guarantee (DESIGN.md, invariant 7). It
 * reaches only connections listening at that instant, so anything sent while
 * this connection is down is lost. Every waiter therefore also has a timeout or
 * an interval, and after each (re)connect every waiter is woken with a `resync`
 * so it re-reads: a missed notification costs latency, never a stuck worker.
 *
 * Subscribe before you read. Read first and subscribe second, and a row
 * committed in between notifies nobody while the read did not see it either:
 * the waiter sleeps through work that is already there. `subscribe` takes
 * effect synchronously, so `subscribe(); await read()` is the safe order.
 *
 * This uses its own pg.Client, not a pooled connection: a LISTEN lives as long
 * as its session, and a pool would hand the session to someone else (or close
 * it when idle) and silently stop the notifications.
 */

export { OUTBOX_CHANNEL, OUTBOX_WAKE_KEY } from "../store/outbox-events";
export { SYSTEM_TASKS_CHANNEL, SYSTEM_TASKS_WAKE_KEY, TASKS_CHANNEL, notifyTaskAvailable, taskAvailableKey } from "../store/task-queues";

/**
 * Raised by the "WorkflowEvents_notify" trigger (migration 0011) at commit,
 * once per workflow per INSERT statement, payload "workflowId:seq" with the
 * statement's highest seq: listeners read the history from their last seq.
 */
export const WORKFLOW_EVENTS_CHANNEL = "node_flow_workflow_events";

/** Raised by the "DecideQueues_notify" trigger (migration 0007) when an evaluation is requested; payload "wake". */
export const DECIDE_CHANNEL = "node_flow_decide";
export const DECIDE_WAKE_KEY = "wake";

/** Raised by the "HumanTasks_notify" trigger (migration 0010) when an inbox row is created or changes; payload "namespaceId:id:status". */
export const INBOX_CHANNEL = "node_flow_inbox";

/**
 * Raised by the "credentials_changed" triggers (migration 0013) when an API key, a user or a service account
 * changes in a way authentication must see; payload "changed". The web process's ApiKeyCache empties on it.
 */
export const CREDENTIALS_CHANNEL = "node_flow_credentials";

export type NotifierChannel =
  | typeof TASKS_CHANNEL
  | typeof SYSTEM_TASKS_CHANNEL
  | typeof OUTBOX_CHANNEL
  | typeof WORKFLOW_EVENTS_CHANNEL
  | typeof DECIDE_CHANNEL
  | typeof INBOX_CHANNEL
  | typeof CREDENTIALS_CHANNEL;

const ALL_CHANNELS: readonly NotifierChannel[] = [TASKS_CHANNEL, SYSTEM_TASKS_CHANNEL, OUTBOX_CHANNEL, WORKFLOW_EVENTS_CHANNEL, DECIDE_CHANNEL, INBOX_CHANNEL, CREDENTIALS_CHANNEL];

/**
 * The waiter key a payload is routed by: the whole "namespaceId:queueName" for
 * tasks (a queue name may itself hold ':', "<domain>:<taskDefName>"), and the
 * workflow id for workflow events ("workflowId:seq", split at the last ':').
 */
export function notificationKey(channel: NotifierChannel, payload: string): string {
  // Inbox changes are routed by namespace: every inbox stream of that namespace hears them.
  if (channel === INBOX_CHANNEL) {
    const colon = payload.indexOf(":");
    return colon < 0 ? payload : payload.slice(0, colon);
  }
  if (channel === WORKFLOW_EVENTS_CHANNEL) {
    const colon = payload.lastIndexOf(":");
    return colon < 0 ? payload : payload.slice(0, colon);
  }
  return payload;
}

export type NotifierEvent =
  | { kind: "notification"; channel: NotifierChannel; key: string; payload: string }
  /** The connection was (re)established; anything may have been missed, so re-read. */
  | { kind: "resync" };

export type NotifierCallback = (event: NotifierEvent) => void;

/** The subset of a pino logger the notifier uses. */
export interface NotifierLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface NotifierOptions {
  connectionString: string;
  applicationName?: string;
  logger?: NotifierLogger;
  /** First reconnect delay; doubles per failed attempt up to `maxReconnectDelayMs`. Default 100. */
  initialReconnectDelayMs?: number;
  /** Default 5000. */
  maxReconnectDelayMs?: number;
  /**
   * The channels to LISTEN on; all by default. Every notification on a channel
   * reaches every listening session, so a process listens only to what it
   * waits for: the web process has no use for decide wake-ups, the sidecar none
   * for a worker queue's tasks (its own, the system tasks' and the outbox's, have channels of their own).
   */
  channels?: readonly NotifierChannel[];
}

export interface NotifierStats {
  connected: boolean;
  /** Successful connects after the first. */
  reconnects: number;
  /** Notifications dispatched (empty payloads excluded). */
  notifications: number;
  /** The backend pid of the LISTEN session, while connected. */
  backendPid: number | null;
  /** Live subscriptions. */
  waiters: number;
}

const noopLogger: NotifierLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** See the module comment. One per process; `start()` once, `close()` at shutdown. */
export class Notifier {
  private readonly options: Required<Omit<NotifierOptions, "logger">>;
  private readonly channels: ReadonlySet<NotifierChannel>;
  private readonly logger: NotifierLogger;
  private readonly waiters = new Map<string, Set<NotifierCallback>>();
  /** Channel-wide subscribers (every key), e.g. the executions list's live feed. */
  private readonly channelWaiters = new Map<NotifierChannel, Set<NotifierCallback>>();
  private client: pg.Client | undefined;
  private backendPid: number | null = null;
  private closed = false;
  private started: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private wakeReconnectDelay: (() => void) | undefined;
  private counters = { reconnects: 0, notifications: 0, connects: 0 };
  /** Connect attempts failing in a row: one line at the start, a summary per 30 s, one at the end (failure-streak.ts). */
  private readonly connectFailures: FailureStreak;

  constructor(options: NotifierOptions) {
    this.options = {
      connectionString: options.connectionString,
      applicationName: options.applicationName ?? "node-flow-notifier",
      initialReconnectDelayMs: options.initialReconnectDelayMs ?? 100,
      maxReconnectDelayMs: options.maxReconnectDelayMs ?? 5000,
      channels: options.channels ?? ALL_CHANNELS,
    };
    this.channels = new Set(this.options.channels);
    this.logger = options.logger ?? noopLogger;
    this.connectFailures = new FailureStreak({ what: "notifier connection", logger: this.logger });
  }

  get stats(): NotifierStats {
    let waiters = 0;
    for (const set of this.waiters.values()) waiters += set.size;
    for (const set of this.channelWaiters.values()) waiters += set.size;
    return {
      connected: this.client !== undefined && this.backendPid !== null,
      reconnects: this.counters.reconnects,
      notifications: this.counters.notifications,
      backendPid: this.backendPid,
      waiters,
    };
  }

  get connected(): boolean {
    return this.stats.connected;
  }

  /**
   * Connects and LISTENs, retrying with backoff until it succeeds or `close()`
   * is called; resolves then. Idempotent. Waiters work before it resolves (and
   * if it never does): they just rely on their own timeouts.
   */
  start(): Promise<void> {
    this.started ??= this.connectLoop();
    return this.started;
  }

  /**
   * Registers `callback` for notifications on `channel` whose key is `key`
   * (see {@link notificationKey}), and for every `resync`. Effective at once,
   * before any read the caller does next. Returns the unsubscribe function.
   */
  subscribe(channel: NotifierChannel, key: string, callback: NotifierCallback): () => void {
    const id = waiterId(channel, key);
    let set = this.waiters.get(id);
    if (!set) {
      set = new Set();
      this.waiters.set(id, set);
    }
    // A wrapper per subscription, so one callback subscribed twice is two
    // subscriptions and unsubscribing one leaves the other.
    const entry: NotifierCallback = (event) => callback(event);
    set.add(entry);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const current = this.waiters.get(id);
      if (!current) return;
      current.delete(entry);
      if (current.size === 0) this.waiters.delete(id);
    };
  }

  /**
   * Like {@link subscribe}, for every notification on `channel` whatever its
   * key (and every `resync`). For a consumer that routes by something the
   * payload does not carry — the executions list's feed learns a run's
   * namespace only by reading it — so it batches what it gets; it must not do
   * per-notification work here.
   */
  subscribeChannel(channel: NotifierChannel, callback: NotifierCallback): () => void {
    let set = this.channelWaiters.get(channel);
    if (!set) {
      set = new Set();
      this.channelWaiters.set(channel, set);
    }
    const entry: NotifierCallback = (event) => callback(event);
    set.add(entry);
    return () => {
      const current = this.channelWaiters.get(channel);
      current?.delete(entry);
      if (current?.size === 0) this.channelWaiters.delete(channel);
    };
  }

  /** Ends the connection and stops reconnecting. Waiters stay registered and fall back to their timeouts. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.wakeReconnectDelay?.();
    const client = this.client;
    this.client = undefined;
    this.backendPid = null;
    if (client) await client.end().catch(() => undefined);
  }

  /** Connects, retrying with backoff; after a lost connection (`reconnecting`) it waits before the first try too. */
  private async connectLoop(reconnecting = false): Promise<void> {
    let delay = this.options.initialReconnectDelayMs;
    if (reconnecting) {
      // A server that just dropped us is often restarting or failing over: an
      // immediate retry would mostly fail, and every replica would make it at once.
      await this.pause(delay);
      delay = Math.min(delay * 2, this.options.maxReconnectDelayMs);
    }
    while (!this.closed) {
      try {
        await this.connectOnce();
        this.connectFailures.succeeded();
        return;
      } catch (error) {
        if (this.closed) return;
        this.connectFailures.failed(error);
        await this.pause(delay);
        delay = Math.min(delay * 2, this.options.maxReconnectDelayMs);
      }
    }
  }

  private async connectOnce(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: this.options.applicationName,
      // A LISTEN session is idle for hours; without keepalive a silently dead
      // peer (a NAT timeout, a failed-over host) is only noticed at the next
      // write, and this session never writes.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client !== client) return; // an abandoned attempt, or close()
      this.client = undefined;
      this.backendPid = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger.warn({ error: error === undefined ? "the server ended the session" : oneLine(error) }, "notifier connection lost; reconnecting");
      // Runs in the background: pg's 'error'/'end' listeners cannot await.
      this.started = this.connectLoop(true);
    };
    client.on("error", onLost);
    client.on("end", () => onLost());
    client.on("notification", (message) => this.dispatch(message));
    try {
      await client.connect();
      // Quoted like every identifier; the names are lowercase so it changes nothing today.
      for (const channel of this.channels) await client.query(`LISTEN "${channel}"`);
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      if (this.closed || lost) throw new Error(this.closed ? "notifier closed while connecting" : "connection lost while connecting");
      this.client = client;
      this.backendPid = rows[0]?.pid ?? null;
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.counters.connects++ > 0) this.counters.reconnects++;
    this.logger.info({ backendPid: this.backendPid, reconnects: this.counters.reconnects }, "notifier listening");
    // Anything sent while we were not listening is gone: make every waiter re-read.
    this.broadcast({ kind: "resync" });
  }

  private dispatch(message: pg.Notification): void {
    // A statement-level trigger that references NEW notifies with an empty
    // payload instead of failing; treat that as no notification, not a crash.
    if (!message.payload) return;
    const channel = message.channel as NotifierChannel;
    if (!this.channels.has(channel)) return;
    this.counters.notifications++;
    const key = notificationKey(channel, message.payload);
    const set = this.waiters.get(waiterId(channel, key));
    const everyKey = this.channelWaiters.get(channel);
    if (!set && !everyKey) return;
    const event: NotifierEvent = { kind: "notification", channel, key, payload: message.payload };
    for (const callback of [...(set ?? []), ...(everyKey ?? [])]) this.call(callback, event);
  }

  private broadcast(event: NotifierEvent): void {
    for (const set of [...this.waiters.values(), ...this.channelWaiters.values()]) {
      for (const callback of [...set]) this.call(callback, event);
    }
  }

  private call(callback: NotifierCallback, event: NotifierEvent): void {
    try {
      callback(event);
    } catch (error) {
      // One broken waiter must not starve the others of their wake-up.
      this.logger.error({ err: error }, "notifier waiter threw");
    }
  }

  private pause(ms: number): Promise<void> {
    // ±20% jitter: replicas that lost the database together should not all
    // reconnect in the same millisecond.
    const jittered = Math.round(ms * (0.8 + 0.4 * Math.random()));
    return new Promise((resolve) => {
      this.wakeReconnectDelay = resolve;
      this.reconnectTimer = setTimeout(resolve, jittered);
    });
  }
}

function waiterId(channel: string, key: string): string {
  return `${channel}\u0000${key}`;
}
