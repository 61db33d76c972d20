import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * The Conductor corpus (server/conductor/fixtures/corpus/, format in its
 * README.md): one JSON file per case, each a WorkflowDef written from
 * Conductor's documentation with what Conductor documents it ends as. Both the
 * end-to-end test (conductor-corpus.int.test.ts) and the round-trip test
 * (conductor-corpus-round-trip.test.ts) glob the folder, so a case is added by
 * dropping in a file. A malformed case file fails loudly, naming the file.
 */

export const CORPUS_DIR = path.join(import.meta.dirname, "..", "fixtures", "corpus");

const Json = z.record(z.string(), z.unknown());
const TaskStatus = z.enum(["SCHEDULED", "IN_PROGRESS", "COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED", "FAILED_WITH_TERMINAL_ERROR", "TIMED_OUT", "CANCELED", "SKIPPED"]);

/** What the generic worker answers for one task type instead of its default echo. */
const WorkerReplySchema = z.strictObject({
  status: z.enum(["COMPLETED", "FAILED", "FAILED_WITH_TERMINAL_ERROR"]).default("COMPLETED"),
  outputData: Json.optional(),
  reasonForIncompletion: z.string().optional(),
});

const CorpusCaseSchema = z.strictObject({
  description: z.string().min(1),
  /** The Conductor documentation page (by title) the case follows. */
  docs: z.string().min(1),
  /** TaskDefs registered (POST /metadata/taskdefs) before anything else. */
  taskDefs: z.array(Json).optional(),
  /** Other WorkflowDefs registered before `workflow`: sub-workflows, START_WORKFLOW targets. */
  register: z.array(Json).optional(),
  workflow: Json,
  /** The start input. Any string "$ECHO_URL" in it is replaced by the URL of an HTTP server that echoes what it is sent. */
  input: Json.default({}),
  /** Task types polled besides the SIMPLE tasks the definitions name (a DYNAMIC task's target, a dynamic fork's). */
  pollTypes: z.array(z.string()).optional(),
  /** Per task type, the TaskResult the generic worker sends instead of its default. */
  workers: z.record(z.string(), WorkerReplySchema).optional(),
  /** Tasks completed from outside (WAIT, HUMAN) once they are IN_PROGRESS, in this order. */
  complete: z.array(z.strictObject({ ref: z.string(), status: z.enum(["COMPLETED", "FAILED"]).default("COMPLETED"), outputData: Json.default({}) })).optional(),
  expect: z.strictObject({
    status: z.enum(["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"]),
    /** A subset of the workflow's output: each key given must deep-equal (objects: match) the value. */
    output: Json.optional(),
    /** The status of the latest attempt of each named task (referenceTaskName); null: never ran (absent, or SKIPPED on a path not taken). */
    tasks: z.record(z.string(), TaskStatus.nullable()).optional(),
    /** Text the workflow's reasonForIncompletion contains. */
    reason: z.string().optional(),
    /** The warning codes registration reports, in any order; absent: not checked. */
    warnings: z.array(z.string()).optional(),
  }),
  /**
   * Why importing and exporting the workflow does not give it back as written (beyond the documented
   * normalisations the round-trip test applies); absent: it must round-trip.
   */
  roundTripDiffers: z.string().optional(),
});

export type CorpusCase = z.output<typeof CorpusCaseSchema> & { file: string };
export type CorpusWorkerReply = z.output<typeof WorkerReplySchema>;

/** Every case of the corpus, sorted by file name. */
export function loadConductorCorpus(dir: string = CORPUS_DIR): CorpusCase[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
  return files.map((file) => {
    const raw: unknown = JSON.parse(readFileSync(path.join(dir, file), "utf8"));
    const parsed = CorpusCaseSchema.safeParse(raw);
    if (!parsed.success) throw new Error(`corpus case ${file}: ${z.prettifyError(parsed.error)}`);
    return { ...parsed.data, file };
  });
}

/** The task types a case's worker polls: every SIMPLE task its definitions name, plus `pollTypes` and `workers`. */
export function corpusTaskTypes(c: CorpusCase): string[] {
  const types = new Set<string>([...(c.pollTypes ?? []), ...Object.keys(c.workers ?? {})]);
  const stack: unknown[] = [c.workflow, ...(c.register ?? [])];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>;
      if (typeof o.taskReferenceName === "string" && typeof o.name === "string" && (o.type === undefined || o.type === "SIMPLE")) types.add(o.name);
      stack.push(...Object.values(o));
    }
  }
  return [...types].sort();
}

/** `value` with every string "$ECHO_URL" replaced by `url`. */
export function withEchoUrl(value: Record<string, unknown>, url: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value).replaceAll('"$ECHO_URL"', JSON.stringify(url))) as Record<string, unknown>;
}
