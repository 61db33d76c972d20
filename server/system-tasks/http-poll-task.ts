import type { ScriptEvaluator } from "../../engine/expressions";
import { scriptResultToBoolean } from "../../engine/expressions";
import { runHttpTask } from "./http-task";
import type { HttpTaskOptions } from "./http-task";
import { completed, failed, failedTerminally, inProgress } from "./system-task-outcome";
import type { SystemTaskOutcome } from "./system-task-outcome";

/**
 * HTTP_POLL: Conductor's HTTP poll task. Each pass sends the request in
 * `http_request` once, through the same guarded client as HTTP (the SSRF
 * guard and timeouts apply to every request), and runs
 * `http_request.terminationCondition` in the QuickJS sandbox with
 * `$ = { input, output: { response } }`. True (or a number above 0, as
 * Conductor's toBoolean): the task completes with `{ response, pollCount }`.
 * Otherwise it stays IN_PROGRESS with that output and comes back after the
 * polling strategy's delay: nothing is held open between requests, and a
 * sidecar that restarts simply finds the task again when it is due.
 *
 * The response's status does not end polling by itself — a status endpoint
 * answering 404 until a job exists is polled on — but a request that gets no
 * response (refused address, timeout, connection error) fails the task as an
 * HTTP task would, to be retried by its policy. `maxPollCount`, when set,
 * fails the task once that many requests have not satisfied the condition.
 */

/** Conductor's default interval, in seconds. */
export const DEFAULT_POLLING_INTERVAL_SECONDS = 60;
/** No single wait grows past a day, whatever the backoff says. */
export const MAX_POLL_DELAY_SECONDS = 86_400;

/** Seconds to wait after the `pollCount`-th request (1-based) under `strategy`. */
export function pollDelaySeconds(strategy: unknown, intervalSeconds: number, pollCount: number): number {
  const n = Math.max(1, pollCount);
  let delay: number;
  if (strategy === "LINEAR_BACKOFF") delay = intervalSeconds * n;
  else if (strategy === "EXPONENTIAL_BACKOFF") delay = intervalSeconds * 2 ** Math.min(n - 1, 30);
  else delay = intervalSeconds;
  return Math.min(delay, MAX_POLL_DELAY_SECONDS);
}

export interface HttpPollTaskContext {
  /** This pass's number, from 1: the task row's pollCount after its lease. */
  pollCount: number;
  scripts: ScriptEvaluator;
  http: HttpTaskOptions;
  /** Per-condition budget; the sandbox's default when absent. */
  scriptTimeoutMs?: number;
}

/** Runs one pass of an HTTP_POLL task whose resolved input is `input`. Never throws. */
export async function runHttpPollTask(input: Record<string, unknown>, context: HttpPollTaskContext): Promise<SystemTaskOutcome> {
  const request = input.http_request;
  if (request === null || typeof request !== "object" || Array.isArray(request)) return failedTerminally("HTTP_POLL task: the input has no http_request object");
  const spec = request as Record<string, unknown>;
  const condition = spec.terminationCondition;
  if (typeof condition !== "string" || condition.trim() === "") return failedTerminally("HTTP_POLL task: http_request.terminationCondition is missing");
  const interval = numberField(spec.pollingInterval, DEFAULT_POLLING_INTERVAL_SECONDS);
  if (interval === undefined || interval < 1) return failedTerminally("HTTP_POLL task: http_request.pollingInterval must be a whole number of seconds, at least 1");
  const maxPollCount = spec.maxPollCount === undefined || spec.maxPollCount === null ? undefined : numberField(spec.maxPollCount, 0);
  if (maxPollCount !== undefined && maxPollCount < 1) return failedTerminally("HTTP_POLL task: http_request.maxPollCount must be a whole number, at least 1");
  const strategy = spec.pollingStrategy ?? "FIXED";
  if (strategy !== "FIXED" && strategy !== "LINEAR_BACKOFF" && strategy !== "EXPONENTIAL_BACKOFF") {
    return failedTerminally(`HTTP_POLL task: http_request.pollingStrategy ${JSON.stringify(strategy)} is not FIXED, LINEAR_BACKOFF or EXPONENTIAL_BACKOFF`);
  }

  const sent = await runHttpTask(input, context.http);
  const response = sent.output.response;
  const pollCount = context.pollCount;
  if (response === undefined) {
    const reason = (sent.reason ?? "HTTP request failed").replace(/^HTTP /, "HTTP_POLL ");
    return { ...sent, reason, output: { ...sent.output, pollCount } };
  }
  const output = { response, pollCount };
  const verdict = context.scripts.evaluate(condition, { $: { input, output: { response } } }, context.scriptTimeoutMs === undefined ? {} : { timeoutMs: context.scriptTimeoutMs });
  if (!verdict.ok) {
    const reason = `HTTP_POLL terminationCondition failed: ${verdict.error}`;
    return verdict.error.startsWith("SyntaxError") ? failedTerminally(reason, { ...output, error: verdict.error }) : failed(reason, { ...output, error: verdict.error });
  }
  if (scriptResultToBoolean(verdict.value)) return completed(output);
  if (maxPollCount !== undefined && pollCount >= maxPollCount) {
    return failed(`HTTP_POLL: terminationCondition still false after ${pollCount} request${pollCount === 1 ? "" : "s"} (maxPollCount ${maxPollCount})`, output);
  }
  return inProgress(output, pollDelaySeconds(strategy, interval, pollCount));
}

/** A whole number given as a number or digits (Conductor reads both), the default when absent, undefined when it is neither. */
function numberField(value: unknown, fallback: number): number | undefined {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^\d+$/.test(value)) return Number(value);
  return undefined;
}
