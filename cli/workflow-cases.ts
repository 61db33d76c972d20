import { z } from "zod";
import type { SimulationResult, TaskOutcome } from "../engine/testkit";

/**
 * The cases file of `nf test` (docs/cli.md, "Testing workflows"): for one
 * workflow, a list of cases, each an input, the mocked results of its tasks,
 * and what must come out. Parsed with zod so a mistyped field is named with
 * its path before anything runs.
 */

const MockResultSchema = z.strictObject({
  status: z.enum(["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]).default("COMPLETED"),
  output: z.record(z.string(), z.unknown()).default({}),
  reason: z.string().optional(),
  afterSeconds: z.number().min(0).max(31_536_000).optional(),
});

/** One mock: a result for every attempt, or a list of results, one per attempt (the last repeats). */
const MockSchema = z.union([MockResultSchema, z.array(MockResultSchema).min(1)]);

const TaskExpectationSchema = z.strictObject({
  status: z.string().optional(),
  output: z.record(z.string(), z.unknown()).optional(),
  attempts: z.int().min(1).optional(),
});

export const CaseSchema = z.strictObject({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /** Mocked results of dispatched tasks (SIMPLE, HTTP, JSON_JQ_TRANSFORM…), by node ref, else task name, else task type. */
  tasks: z.record(z.string(), MockSchema).default({}),
  /** WAIT and HUMAN tasks completed by a signal, by node ref. */
  signals: z.record(z.string(), MockSchema).default({}),
  expect: z
    .strictObject({
      status: z.enum(["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED", "RUNNING", "PAUSED"]).default("COMPLETED"),
      /** Every field given must be equal (deeply; arrays whole); fields not given are not checked. */
      output: z.record(z.string(), z.unknown()).optional(),
      /** The refs that ran, in the order they were first scheduled; skipped nodes are not in it. */
      path: z.array(z.string()).optional(),
      /** Refs that must have been skipped (a branch not taken). */
      skipped: z.array(z.string()).optional(),
      /** Per ref, its last attempt's status and output (a subset), and how many attempts it took. */
      tasks: z.record(z.string(), TaskExpectationSchema).optional(),
      /** A substring of the run's reasonForIncompletion. */
      reason: z.string().optional(),
    })
    .default({ status: "COMPLETED" }),
});

export const CasesFileSchema = z.strictObject({
  $schema: z.string().optional(),
  /** The workflow's name, checked against the workflow file's when given. */
  workflow: z.string().optional(),
  cases: z.array(CaseSchema).min(1),
});

export type WorkflowCase = z.output<typeof CaseSchema>;
export type MockResult = z.output<typeof MockResultSchema>;

/** The outcome a mock gives attempt `attempt` (0-based). */
export function mockOutcome(mock: MockResult | MockResult[], attempt: number): TaskOutcome {
  const result = Array.isArray(mock) ? mock[Math.min(attempt, mock.length - 1)]! : mock;
  const base = result.afterSeconds === undefined ? {} : { afterSeconds: result.afterSeconds };
  if (result.status === "COMPLETED") return { status: "COMPLETED", output: result.output, ...base };
  return { status: result.status, output: result.output, reason: result.reason ?? `mocked ${result.status}`, ...base };
}

/** One difference between what a case expects and what the run did. */
export interface CaseMismatch {
  what: string;
  expected: unknown;
  actual: unknown;
}

/** The first path at which `actual` lacks what `expected` has; undefined when it has all of it. */
function subsetDifference(expected: unknown, actual: unknown, at: string): CaseMismatch | undefined {
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return { what: at, expected, actual };
    for (const [key, value] of Object.entries(expected)) {
      const d = subsetDifference(value, (actual as Record<string, unknown>)[key], `${at}.${key}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? undefined : { what: at, expected, actual };
}

/** Every way `result` differs from `c.expect`, in the order a reader checks them. */
export function checkCase(c: WorkflowCase, result: SimulationResult): CaseMismatch[] {
  const e = c.expect;
  const mismatches: CaseMismatch[] = [];
  if (result.status !== e.status) mismatches.push({ what: "status", expected: e.status, actual: result.reasonForIncompletion ? `${result.status} (${result.reasonForIncompletion})` : result.status });
  if (e.reason !== undefined && !(result.reasonForIncompletion ?? "").includes(e.reason)) mismatches.push({ what: "reason", expected: `…${e.reason}…`, actual: result.reasonForIncompletion ?? null });
  if (e.output !== undefined) {
    const d = subsetDifference(e.output, result.output, "output");
    if (d !== undefined) mismatches.push(d);
  }
  const ran: string[] = [];
  for (const t of result.tasks) if (t.status !== "SKIPPED" && t.status !== "CANCELED" && !ran.includes(t.ref)) ran.push(t.ref);
  if (e.path !== undefined && JSON.stringify(e.path) !== JSON.stringify(ran)) mismatches.push({ what: "path", expected: e.path, actual: ran });
  for (const ref of e.skipped ?? []) {
    const rows = result.tasks.filter((t) => t.ref === ref);
    if (rows.length === 0 || rows.some((t) => t.status !== "SKIPPED")) mismatches.push({ what: `skipped ${ref}`, expected: "SKIPPED", actual: rows.length === 0 ? "(never reached)" : rows.map((t) => t.status).join(", ") });
  }
  for (const [ref, want] of Object.entries(e.tasks ?? {})) {
    const rows = result.tasks.filter((t) => t.ref === ref);
    const last = rows.at(-1);
    if (last === undefined) {
      mismatches.push({ what: `tasks.${ref}`, expected: "to run", actual: "(never scheduled)" });
      continue;
    }
    if (want.status !== undefined && last.status !== want.status) mismatches.push({ what: `tasks.${ref}.status`, expected: want.status, actual: last.status });
    if (want.attempts !== undefined) {
      const attempts = new Set(rows.filter((t) => t.iteration === last.iteration).map((t) => t.attempt)).size;
      if (attempts !== want.attempts) mismatches.push({ what: `tasks.${ref}.attempts`, expected: want.attempts, actual: attempts });
    }
    if (want.output !== undefined) {
      const d = subsetDifference(want.output, last.output, `tasks.${ref}.output`);
      if (d !== undefined) mismatches.push(d);
    }
  }
  return mismatches;
}

/** A mismatch as indented lines: `- expected` / `+ actual`. */
export function formatMismatch(m: CaseMismatch): string {
  const show = (v: unknown) => (v === undefined ? "(absent)" : typeof v === "string" ? v : JSON.stringify(v));
  return `    ${m.what}:\n      - expected ${show(m.expected)}\n      + actual   ${show(m.actual)}\n`;
}
