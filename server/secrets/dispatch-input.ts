import type { Db } from "@/db/pool";
import { AGENT_TOOL_INPUT_KEY, agentToolDispatchSites, blueprintNode, dispatchReferenceText, dispatchSites, dispatchTemplate, parseAgentChildRef, resolveTemplate, SECRET_MASK } from "../../engine";
import type { Blueprint, DispatchReference, DispatchSite, ExpressionContext } from "../../engine";
import type { BlobStore } from "../lib/blob-store";
import { LruCache } from "../lib/lru-cache";
import { resolvePayload } from "../lib/payload-offload";
import type { SecretLookup } from "../lib/secret-lookup";
import { variableValues } from "./environment-variables";

/**
 * Resolution at dispatch (DESIGN.md, "Secrets"): the copy of a task's input
 * that is sent — to the HTTP client, the INLINE sandbox, jq, a worker's poll
 * answer — gets the values of `${workflow.secrets.NAME}` and
 * `${workflow.env.NAME}`; the stored input keeps `***` (a variable: its
 * reference), so history, the live view and every API read show that.
 *
 * The values go only where the definition wrote the references: each such
 * string of the node's input template (dispatchSites, from the blueprint) is
 * resolved again, against the run's input and ids and the namespace's values,
 * and put at the same path of the input. Nothing in the stored input is
 * re-read for references, so data — an upstream output holding the text
 * `${workflow.secrets.X}` — never makes the dispatcher splice a secret in.
 *
 * A task whose stored input holds neither `***` nor `${workflow.env.` cannot
 * have been written from such a string, and is passed through without a
 * query: what every task that uses no secret costs is one string scan.
 */

export interface DispatchDeps {
  db: Db;
  /** Secret values by name; without it, a task that reads a secret fails saying secrets are not configured here. */
  secrets?: SecretLookup;
  /** For a run input offloaded to the blob store, read when a site reads `${workflow.input…}`. */
  blobs?: BlobStore;
}

export interface DispatchTask {
  id: string;
  namespaceId: string;
  workflowId: string;
  refName: string;
  input: Record<string, unknown>;
}

export interface DispatchedInput {
  /** The input to send: the stored one, or a copy with the values in place. */
  input: Record<string, unknown>;
  /** The secret values put into it: what the task's output, errors and logs are redacted of (redact.ts). */
  secretValues: string[];
}

/** A secret or variable the input reads is missing, or secrets cannot be read here. Its message names it and never holds a value. */
export class DispatchReferenceError extends Error {
  override name = "DispatchReferenceError";
}

/** Whether `secrets` are handed over: the system tasks and workers of a task definition that allows it; otherwise they read `***`. */
export type SecretsPolicy = "resolve" | "mask";

/** The cheap test: could the stored input have been written from a string that reads a secret or variable? */
export function mayHoldDispatchReferences(input: unknown): boolean {
  if (typeof input !== "object" || input === null) return false;
  const text = JSON.stringify(input);
  return text.includes(SECRET_MASK) || text.includes("${workflow.env.");
}

// Blueprints are immutable per (namespace, name, version), so their sites never go stale.
const sitesByNode = new LruCache<string, Map<string, DispatchSite[]>>(256);

async function sitesOf(db: Db, run: { namespaceId: string; defName: string; defVersion: number }, refName: string, input: Record<string, unknown>): Promise<DispatchSite[]> {
  const key = `${run.namespaceId}\u0000${run.defName}\u0000${run.defVersion}`;
  let byRef = sitesByNode.get(key);
  if (byRef === undefined) {
    const row = await db
      .selectFrom("WorkflowDefinitions")
      .select("blueprint")
      .where("namespaceId", "=", run.namespaceId)
      .where("name", "=", run.defName)
      .where("version", "=", run.defVersion)
      .executeTakeFirst();
    byRef = new Map();
    const blueprint = row?.blueprint as Blueprint | undefined;
    if (blueprint !== undefined) {
      for (const ref of Object.keys(blueprint.nodes)) {
        const node = blueprintNode(blueprint, ref);
        const template = node === undefined ? undefined : dispatchTemplate(node);
        const sites = template === undefined ? [] : dispatchSites(template);
        if (sites.length > 0) byRef.set(ref, sites);
        // An agent's tool calls read secrets in their tool's headers only, found by the tool's name (keys "<agent>#tool:<name>").
        if (node?.type === "AGENT") {
          const tools = (node.config.agent as { tools?: { name?: unknown }[] } | undefined)?.tools ?? [];
          for (const tool of tools) {
            const toolSites = agentToolDispatchSites(node, tool.name);
            if (toolSites.length > 0) byRef.set(`${ref}#tool:${String(tool.name)}`, toolSites);
          }
        }
      }
    }
    sitesByNode.set(key, byRef);
  }
  const agentChild = parseAgentChildRef(refName);
  if (agentChild !== undefined) return agentChild.role === "tool" ? (byRef.get(`${agentChild.agentRef}#tool:${String(input[AGENT_TOOL_INPUT_KEY])}`) ?? []) : [];
  return byRef.get(refName) ?? [];
}

/** Own-key write along `path`, copying each container on the way so the stored input is never changed. */
function setAt(root: Record<string, unknown>, path: readonly (string | number)[], value: unknown): Record<string, unknown> {
  const out = { ...root };
  let target: Record<string, unknown> | unknown[] = out;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const last = i === path.length - 1;
    const current: unknown = Array.isArray(target) ? target[key as number] : (target)[key];
    const next: unknown = last ? value : Array.isArray(current) ? [...(current as unknown[])] : typeof current === "object" && current !== null ? { ...(current as Record<string, unknown>) } : undefined;
    if (next === undefined) return out;
    if (Array.isArray(target)) target[key as number] = next;
    else Object.defineProperty(target, String(key), { value: next, enumerable: true, writable: true, configurable: true });
    if (!last) target = next as Record<string, unknown> | unknown[];
  }
  return out;
}

/**
 * The input to send for each task, in order. Throws DispatchReferenceError
 * for the first task that reads a secret or variable the namespace lacks
 * (callers that dispatch several tasks use {@link dispatchInputsSettled}).
 */
export async function dispatchInput(deps: DispatchDeps, task: DispatchTask, policy: SecretsPolicy): Promise<DispatchedInput> {
  if (!mayHoldDispatchReferences(task.input)) return { input: task.input, secretValues: [] };
  const run = await deps.db
    .selectFrom("WorkflowExecutions")
    .select(["namespaceId", "defName", "defVersion", "status", "input", "inputRef", "correlationId", "parentWorkflowId", "startedAt", "variables"])
    .where("id", "=", task.workflowId)
    .where("namespaceId", "=", task.namespaceId)
    .executeTakeFirst();
  if (run === undefined) return { input: task.input, secretValues: [] };
  const sites = await sitesOf(deps.db, run, task.refName, task.input);
  if (sites.length === 0) return { input: task.input, secretValues: [] };

  const wanted = new Map<string, DispatchReference>();
  for (const site of sites) for (const r of site.references) wanted.set(`${r.kind}:${r.name}`, r);
  const envNames = [...wanted.values()].filter((r) => r.kind === "env").map((r) => r.name);
  const env = envNames.length === 0 ? new Map<string, string>() : await variableValues(deps.db, task.namespaceId, envNames);
  const secrets = new Map<string, string>();
  for (const r of wanted.values()) {
    if (r.kind !== "secrets" || policy === "mask") continue;
    if (deps.secrets === undefined) throw new DispatchReferenceError(`${dispatchReferenceText(r)} cannot be resolved: this process has no access to the namespace's secrets`);
    const value = await deps.secrets(task.namespaceId, r.name);
    if (value === null) throw new DispatchReferenceError(`${dispatchReferenceText(r)} names no secret of this namespace: add it in Settings → Secrets`);
    secrets.set(r.name, value);
  }
  for (const r of wanted.values()) {
    if (r.kind === "env" && !env.has(r.name)) throw new DispatchReferenceError(`${dispatchReferenceText(r)} names no environment variable of this namespace: add it in Settings → Variables`);
  }

  const runInput = run.inputRef === null ? run.input : await readRunInput(deps, run.input, run.inputRef);
  const context: ExpressionContext = {
    workflow: {
      workflowId: task.workflowId,
      workflowType: run.defName,
      version: run.defVersion,
      status: run.status,
      input: typeof runInput === "object" && runInput !== null && !Array.isArray(runInput) ? (runInput as Record<string, unknown>) : {},
      // Sites cannot read them (validation): given empty, so a definition that slipped past reads nothing that moved.
      variables: {},
      startTime: run.startedAt.getTime(),
      ...(run.correlationId === null ? {} : { correlationId: run.correlationId }),
      ...(run.parentWorkflowId === null ? {} : { parentWorkflowId: run.parentWorkflowId }),
    },
    task: () => undefined,
    taskId: task.id,
  };
  const dispatch = (r: DispatchReference): unknown => (r.kind === "env" ? (env.get(r.name) ?? null) : policy === "mask" ? SECRET_MASK : (secrets.get(r.name) ?? null));
  let input = task.input;
  for (const site of sites) input = setAt(input, site.path, resolveTemplate(site.text, context, { dispatch }));
  return { input, secretValues: [...secrets.values()] };
}

async function readRunInput(deps: DispatchDeps, inline: unknown, ref: string): Promise<unknown> {
  if (deps.blobs === undefined) return {};
  return resolvePayload(deps.blobs, { inline, ref }, "the run's input");
}

/** {@link dispatchInput} for several tasks: each its input, or the error that stops it from being sent. */
export async function dispatchInputsSettled(
  deps: DispatchDeps,
  tasks: readonly DispatchTask[],
  policyOf: (index: number) => SecretsPolicy | Promise<SecretsPolicy>,
): Promise<({ ok: true; dispatched: DispatchedInput } | { ok: false; error: DispatchReferenceError })[]> {
  const out: ({ ok: true; dispatched: DispatchedInput } | { ok: false; error: DispatchReferenceError })[] = [];
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]!;
    if (!mayHoldDispatchReferences(task.input)) {
      out.push({ ok: true, dispatched: { input: task.input, secretValues: [] } });
      continue;
    }
    try {
      out.push({ ok: true, dispatched: await dispatchInput(deps, task, await policyOf(i)) });
    } catch (error) {
      if (!(error instanceof DispatchReferenceError)) throw error;
      out.push({ ok: false, error });
    }
  }
  return out;
}
