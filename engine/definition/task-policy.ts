import { z } from "zod";

/**
 * Retry, timeout, rate-limit and caching policy for one node, with the
 * meaning and defaults of Conductor's TaskDef (and WorkflowTask for
 * `startDelay` and `cache`). Every field is optional: a value left out comes
 * from the task definition registered under the node's `name`, then from
 * {@link TASK_POLICY_DEFAULTS} — see {@link effectiveTaskPolicy}. Parsing never
 * fills defaults in, so a stored definition says only what its author said.
 *
 * The `title`/`description`/`default` metadata on each field is what the
 * editor's inspector renders (labels, help text, placeholders).
 */

/** How the delay before each retry grows (Conductor's `RetryLogic`). */
export const RETRY_LOGICS = ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] as const;
/** What a task timeout does (Conductor's TaskDef `TimeoutPolicy`). */
export const TASK_TIMEOUT_POLICIES = ["RETRY", "TIME_OUT_WF", "ALERT_ONLY"] as const;

const int = (min = 0) => z.number().int().min(min);

/** Output caching: a completed output is reused for the same key until it expires. */
export const TaskCacheSchema = z
  .strictObject({
    key: z
      .string()
      .min(1)
      .meta({ title: "Cache key", description: "Template for the key, usually built from input, e.g. `${workflow.input.customerId}`." }),
    ttlSeconds: int(1).meta({ title: "Time to live (s)", description: "How long a cached output is reused." }),
  })
  .meta({
    title: "Output cache",
    description: "Reuse a previous output with the same key instead of running the task again (Conductor's cacheConfig). Outputs offloaded to the blob store are never cached.",
  });

/** Zod schema of {@link TaskPolicy}. */
export const TaskPolicySchema = z
  .strictObject({
    retryCount: int()
      .optional()
      .meta({ title: "Retries", description: "How many times a failed attempt is retried, each as a new attempt. FAILED_WITH_TERMINAL_ERROR is never retried.", default: 3 }),
    retryLogic: z
      .enum(RETRY_LOGICS)
      .optional()
      .meta({
        title: "Retry logic",
        description: "FIXED waits retryDelaySeconds every time; LINEAR_BACKOFF waits retryDelaySeconds × backoffScaleFactor × attempt; EXPONENTIAL_BACKOFF waits retryDelaySeconds × 2^(attempt − 1).",
        default: "FIXED",
      }),
    retryDelaySeconds: int()
      .optional()
      .meta({ title: "Retry delay (s)", description: "Base delay before a retry.", default: 60 }),
    backoffScaleFactor: int(1)
      .optional()
      .meta({ title: "Backoff scale factor", description: "Multiplier for LINEAR_BACKOFF.", default: 1 }),
    maxRetryDelaySeconds: int()
      .optional()
      .meta({ title: "Max retry delay (s)", description: "Upper bound on any computed retry delay; 0 means no bound. (node-flow addition.)", default: 0 }),
    timeoutSeconds: int()
      .optional()
      .meta({ title: "Timeout (s)", description: "How long one attempt may take from its first poll to completion; 0 means no timeout.", default: 0 }),
    timeoutPolicy: z
      .enum(TASK_TIMEOUT_POLICIES)
      .optional()
      .meta({
        title: "On timeout",
        description: "RETRY times the attempt out and retries it; TIME_OUT_WF times out the whole workflow; ALERT_ONLY only records the breach.",
        default: "TIME_OUT_WF",
      }),
    responseTimeoutSeconds: int(1)
      .optional()
      .meta({
        title: "Response timeout (s)",
        description: "How long a worker may hold an attempt without reporting progress before it is re-queued. Must not exceed the timeout when one is set.",
        default: 3600,
      }),
    pollTimeoutSeconds: int()
      .optional()
      .meta({ title: "Poll timeout (s)", description: "How long an attempt may wait to be polled by a worker before it times out; 0 means no limit.", default: 0 }),
    totalTimeoutSeconds: int()
      .optional()
      .meta({ title: "Total timeout (s)", description: "Bound on the task across all its attempts and retry delays; 0 means no bound. (node-flow addition.)", default: 0 }),
    rateLimitPerFrequency: int()
      .optional()
      .meta({ title: "Rate limit", description: "At most this many attempts start per rateLimitFrequencyInSeconds window; 0 means unlimited.", default: 0 }),
    rateLimitFrequencyInSeconds: int(1)
      .optional()
      .meta({ title: "Rate limit window (s)", description: "The window rateLimitPerFrequency counts in.", default: 1 }),
    concurrentExecLimit: int()
      .optional()
      .meta({ title: "Concurrency limit", description: "At most this many attempts of this task definition IN_PROGRESS at once, across all workflows; 0 means unlimited.", default: 0 }),
    startDelay: int()
      .optional()
      .meta({ title: "Start delay (s)", description: "Seconds to wait after the task is scheduled before a worker may poll it.", default: 0 }),
    inputTemplate: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ title: "Input template", description: "Default input values; keys the node's input also sets are overridden by it.", default: {} }),
    cache: TaskCacheSchema.optional().meta(TaskCacheSchema.meta() ?? {}),
  })
  .meta({ title: "Task policy", description: "Retries, timeouts, rate limits and caching, as in a Conductor TaskDef." });

/** A node's retry/timeout/rate-limit/cache policy; every field optional (see the module comment). */
export type TaskPolicy = z.infer<typeof TaskPolicySchema>;

/** {@link TaskPolicy} with every field that has a default filled in; `cache` stays optional. */
export type EffectiveTaskPolicy = Required<Omit<TaskPolicy, "cache">> & Pick<TaskPolicy, "cache">;

/** Conductor's TaskDef defaults (0 meaning "none" where Conductor uses null). */
export const TASK_POLICY_DEFAULTS: Readonly<Required<Omit<TaskPolicy, "cache">>> = Object.freeze({
  retryCount: 3,
  retryLogic: "FIXED",
  retryDelaySeconds: 60,
  backoffScaleFactor: 1,
  maxRetryDelaySeconds: 0,
  timeoutSeconds: 0,
  timeoutPolicy: "TIME_OUT_WF",
  responseTimeoutSeconds: 3600,
  pollTimeoutSeconds: 0,
  totalTimeoutSeconds: 0,
  rateLimitPerFrequency: 0,
  rateLimitFrequencyInSeconds: 1,
  concurrentExecLimit: 0,
  startDelay: 0,
  inputTemplate: Object.freeze({}) as Record<string, unknown>,
});

/**
 * The policy an attempt runs under: each field from the first layer that sets
 * it (pass the node's policy first, then the registered task definition's),
 * else {@link TASK_POLICY_DEFAULTS}. When a timeout is set but no layer sets a
 * response timeout, the response timeout is capped at the timeout — Conductor
 * would reject that TaskDef, since its default (3600 s) exceeds most timeouts.
 */
export function effectiveTaskPolicy(...layers: ReadonlyArray<TaskPolicy | undefined>): EffectiveTaskPolicy {
  const pick = <K extends keyof TaskPolicy>(key: K): TaskPolicy[K] => {
    for (const layer of layers) {
      const value = layer?.[key];
      if (value !== undefined) return value;
    }
    return undefined;
  };
  const out = { ...TASK_POLICY_DEFAULTS } as EffectiveTaskPolicy;
  for (const key of Object.keys(TASK_POLICY_DEFAULTS) as (keyof typeof TASK_POLICY_DEFAULTS)[]) {
    const value = pick(key);
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  if (pick("responseTimeoutSeconds") === undefined && out.timeoutSeconds > 0) {
    out.responseTimeoutSeconds = Math.min(out.responseTimeoutSeconds, out.timeoutSeconds);
  }
  const cache = pick("cache");
  if (cache !== undefined) out.cache = cache;
  return out;
}
