import { describe, expect, it } from "vitest";
import { exportConductorWorkflow, importConductorWorkflow } from "../../engine";
import { loadConductorCorpus } from "./testing/conductor-corpus";

/**
 * Editor fidelity for the Conductor corpus (fixtures/corpus/README.md): each
 * workflow imported into the graph the editor shows and exported back is the
 * WorkflowDef it was — every field — once both sides are put in the normal
 * form below, whose rules are the documented ways export writes the same
 * workflow (docs/conductor.md, "Import and export").
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** Workflow-level values export always writes, equal to Conductor's defaults: dropped on both sides. */
const WORKFLOW_DEFAULTS: Json = { schemaVersion: 2, restartable: true, timeoutPolicy: "ALERT_ONLY", timeoutSeconds: 0, workflowStatusListenerEnabled: false };
const HTTP_NUMBERS = ["connectionTimeOut", "readTimeOut"];

function normalTask(task: Json, forks: { n: number }): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(task)) {
    if (v === null || v === undefined || isEmpty(v)) continue;
    if (k === "optional" && v === false) continue;
    out[k] = v;
  }
  out.type ??= "SIMPLE";
  // Import keeps no FORK_JOIN node (a fork is edges), so export generates its ref.
  if (out.type === "FORK_JOIN") out.taskReferenceName = out.name = `fork_${++forks.n}`;
  // The JOIN after a FORK_JOIN_DYNAMIC is absorbed into the fork, so export writes it as `<fork>_join` named after its ref.
  if (out.type === "JOIN" && out.joinOn === undefined) out.name = out.taskReferenceName;
  if (out.type === "DECISION") {
    // DECISION is written as the SWITCH it runs as.
    out.type = "SWITCH";
    if (typeof out.caseValueParam === "string") {
      out.evaluatorType = "value-param";
      out.expression = out.caseValueParam;
    } else if (typeof out.caseExpression === "string") {
      out.evaluatorType = "javascript";
      out.expression = out.caseExpression;
    }
    delete out.caseValueParam;
    delete out.caseExpression;
  }
  // retryCount is written on the WorkflowTask, never in its taskDefinition.
  if (isObject(out.taskDefinition) && out.taskDefinition.retryCount !== undefined) {
    const { retryCount, ...definition } = out.taskDefinition;
    out.retryCount ??= retryCount;
    out.taskDefinition = definition;
  }
  const input = out.inputParameters;
  if (out.type === "LAMBDA" && isObject(input) && typeof input.scriptExpression === "string") {
    // LAMBDA is written as the INLINE it runs as, its script wrapped as Conductor runs it.
    out.type = "INLINE";
    const { scriptExpression, ...rest } = input;
    out.inputParameters = { ...rest, evaluatorType: "javascript", expression: `function scriptFun(){${scriptExpression}} scriptFun();` };
  }
  if (out.type === "HTTP" && isObject(input) && isObject(input.http_request)) {
    const request = { ...input.http_request };
    for (const k of HTTP_NUMBERS) if (typeof request[k] === "string" && /^\d+$/.test(request[k])) request[k] = Number(request[k]);
    out.inputParameters = { ...input, http_request: request };
  }
  for (const k of ["loopOver", "defaultCase"]) if (Array.isArray(out[k])) out[k] = (out[k] as Json[]).map((t) => normalTask(t, forks));
  if (Array.isArray(out.forkTasks)) out.forkTasks = (out.forkTasks as Json[][]).map((branch) => branch.map((t) => normalTask(t, forks)));
  if (isObject(out.decisionCases)) out.decisionCases = Object.fromEntries(Object.entries(out.decisionCases).map(([c, list]) => [c, (list as Json[]).map((t) => normalTask(t, forks))]));
  const sub = out.subWorkflowParam;
  if (isObject(sub) && isObject(sub.workflowDefinition)) out.subWorkflowParam = { ...sub, workflowDefinition: normalWorkflow(sub.workflowDefinition) };
  return out;
}

/** A WorkflowDef in the normal form both sides of the comparison are put in. */
function normalWorkflow(def: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(def)) {
    if (v === null || v === undefined || isEmpty(v)) continue;
    if (k in WORKFLOW_DEFAULTS && WORKFLOW_DEFAULTS[k] === v) continue;
    if (k === "version" && v === 1) continue;
    out[k] = v;
  }
  const forks = { n: 0 };
  out.tasks = ((def.tasks ?? []) as Json[]).map((t) => normalTask(t, forks));
  return out;
}

describe("every workflow of the Conductor corpus round-trips through the editor's graph", () => {
  const corpus = loadConductorCorpus();
  it.each(corpus.filter((c) => c.roundTripDiffers === undefined).map((c) => [c.file, c] as const))("%s", (_file, c) => {
    const imported = importConductorWorkflow(c.workflow);
    expect(imported.ok, JSON.stringify(imported)).toBe(true);
    if (!imported.ok) return;
    const exported = exportConductorWorkflow(imported.definition);
    expect(exported.ok, JSON.stringify(exported)).toBe(true);
    if (!exported.ok) return;
    expect(normalWorkflow(exported.workflowDef as unknown as Json)).toEqual(normalWorkflow(c.workflow));
  });
});
