import type { TaskPolicy } from "../definition";
import { TASK_POLICY_DEFAULTS } from "../definition";
import type { ConductorCacheConfig, ConductorTaskDef, ConductorWorkflowTask } from "./conductor-schema";

/**
 * A node's `policy` ↔ Conductor's per-task knobs. Conductor spreads them over
 * three places, and the mapping keeps each in its native one:
 * - `WorkflowTask.retryCount` (overrides the TaskDef's without replacing it),
 *   `WorkflowTask.startDelay`, `WorkflowTask.cacheConfig`;
 * - everything else in an inline `taskDefinition`.
 *
 * The one difference of meaning: in Conductor an inline `taskDefinition`
 * *replaces* the registered TaskDef, so a field it leaves out takes
 * Conductor's default; in node-flow a node's policy is layered over the
 * registered TaskDef (`effectiveTaskPolicy`), so a field it leaves out comes
 * from there. Import copies exactly the fields the inline definition states —
 * Conductor itself serialises every field, so a definition exported from a
 * Conductor server arrives complete and keeps its meaning; export writes
 * exactly the fields the policy states, so the inline definition says what
 * the author said. Export emits no `taskDefinition` for a node without
 * TaskDef-level policy, so such a task keeps using its registered TaskDef.
 */

/** Policy fields that live in Conductor's TaskDef. */
const TASK_DEF_FIELDS = [
  "retryLogic",
  "retryDelaySeconds",
  "backoffScaleFactor",
  "maxRetryDelaySeconds",
  "timeoutSeconds",
  "timeoutPolicy",
  "responseTimeoutSeconds",
  "pollTimeoutSeconds",
  "totalTimeoutSeconds",
  "rateLimitPerFrequency",
  "rateLimitFrequencyInSeconds",
  "concurrentExecLimit",
] as const satisfies readonly (keyof TaskPolicy & keyof ConductorTaskDef)[];

/** A policy, and the notes on what the mapping could not carry. */
export interface PolicyImport {
  policy: TaskPolicy | undefined;
  dropped: string[];
}

/** The policy a Conductor WorkflowTask states: its inline taskDefinition, retryCount, startDelay and cacheConfig. */
export function policyFromConductor(task: ConductorWorkflowTask): PolicyImport {
  const policy: TaskPolicy = {};
  const dropped: string[] = [];
  const def = task.taskDefinition;
  if (def !== undefined && def !== null) {
    if (def.retryCount !== undefined && def.retryCount !== null) policy.retryCount = def.retryCount;
    for (const field of TASK_DEF_FIELDS) {
      const value = def[field];
      if (value !== undefined && value !== null) (policy as Record<string, unknown>)[field] = value;
    }
    if (def.inputTemplate !== undefined && def.inputTemplate !== null && Object.keys(def.inputTemplate).length > 0) policy.inputTemplate = def.inputTemplate;
    if (def.isolationGroupId !== undefined && def.isolationGroupId !== null) dropped.push("taskDefinition.isolationGroupId");
    if (def.executionNameSpace !== undefined && def.executionNameSpace !== null) dropped.push("taskDefinition.executionNameSpace");
    if (def.backoffJitterMs !== undefined && def.backoffJitterMs !== null && def.backoffJitterMs > 0) dropped.push("taskDefinition.backoffJitterMs");
  }
  if (task.retryCount !== undefined && task.retryCount !== null) policy.retryCount = task.retryCount;
  if (task.startDelay !== undefined && task.startDelay !== null && task.startDelay > 0) policy.startDelay = task.startDelay;
  const cache = task.cacheConfig;
  if (cache !== undefined && cache !== null) {
    if (typeof cache.key === "string" && cache.key !== "" && typeof cache.ttlInSecond === "number" && cache.ttlInSecond > 0) {
      policy.cache = { key: cache.key, ttlSeconds: cache.ttlInSecond };
    } else {
      dropped.push("cacheConfig (it needs a key and a positive ttlInSecond)");
    }
  }
  return { policy: Object.keys(policy).length === 0 ? undefined : policy, dropped };
}

/** The WorkflowTask fields carrying a policy (see the module comment for where each goes). */
export interface PolicyExport {
  retryCount?: number;
  startDelay?: number;
  cacheConfig?: ConductorCacheConfig;
  taskDefinition?: ConductorTaskDef;
}

/** Where a node's policy goes on its WorkflowTask; `name` names the inline TaskDef (Conductor requires one). */
export function policyToConductor(policy: TaskPolicy | undefined, name: string): PolicyExport {
  const out: PolicyExport = {};
  if (policy === undefined) return out;
  if (policy.retryCount !== undefined) out.retryCount = policy.retryCount;
  if (policy.startDelay !== undefined) out.startDelay = policy.startDelay;
  if (policy.cache !== undefined) out.cacheConfig = { key: policy.cache.key, ttlInSecond: policy.cache.ttlSeconds };
  const def: ConductorTaskDef = {};
  for (const field of TASK_DEF_FIELDS) {
    const value = policy[field];
    if (value !== undefined) (def as Record<string, unknown>)[field] = value;
  }
  if (policy.inputTemplate !== undefined && Object.keys(policy.inputTemplate).length > 0) def.inputTemplate = policy.inputTemplate;
  if (Object.keys(def).length === 0) return out;
  // Conductor rejects a TaskDef whose response timeout exceeds its timeout, and
  // its default (3600 s) exceeds most timeouts: state the cap node-flow applies.
  if (def.timeoutSeconds !== undefined && def.timeoutSeconds !== null && def.timeoutSeconds > 0 && def.responseTimeoutSeconds === undefined) {
    def.responseTimeoutSeconds = Math.min(TASK_POLICY_DEFAULTS.responseTimeoutSeconds, def.timeoutSeconds);
  }
  out.taskDefinition = { name, ...def };
  return out;
}
