import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { AuditEventRow, TaskExecutionRow, WorkflowEventRow, WorkflowExecutionRow } from "../../../db/schema";
import { useTestDatabase } from "../../../db/testing/test-database";
import type { TestDatabase } from "../../../db/testing/test-database";
import { evaluateBatch } from "../../evaluator/evaluator";
import { registerWorkflowDefinition } from "../../definitions/register-workflow-definition";
import { createQuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import type { QuickJsScriptEvaluator } from "../../sandbox/quickjs-script-evaluator";
import { startExecution } from "../start-execution";
import { driveWorkflows } from "../../testing/drive-workflows";
import { FilesystemBlobStore } from "../../lib/blob-store";
import type { Actor, WorkflowActionDeps } from "./action-support";

/**
 * Shared set-up for the operator-action integration tests: a cloned database,
 * a namespace (and a second one, for isolation checks), the real evaluator
 * with QuickJS, and an in-test worker loop. Every workflow runs through the
 * real decider; nothing is simulated.
 */

export type WorkerResult = { status: "COMPLETED" | "FAILED"; output?: Record<string, unknown>; reason?: string };
export type WorkerHandler = (task: TaskExecutionRow) => WorkerResult;

export interface ActionHarness {
  readonly t: TestDatabase;
  readonly namespaceId: string;
  readonly otherNamespaceId: string;
  readonly actor: Actor;
  readonly blobs: FilesystemBlobStore;
  deps(): WorkflowActionDeps;
  /** Registers a definition under a fresh name and returns the name. */
  register(definition: Record<string, unknown>): Promise<string>;
  /** Starts a run the way the API does and returns its id. */
  start(name: string, input?: Record<string, unknown>): Promise<string>;
  /** One evaluateBatch pass; returns how many workflows it evaluated. */
  evaluate(): Promise<number>;
  /**
   * Evaluates and works `queue` until nothing moves (or `rounds` passes).
   * Returns the tasks the worker handled, in order.
   */
  drive(handler?: WorkerHandler, options?: { queue?: string; rounds?: number }): Promise<TaskExecutionRow[]>;
  execution(id: string): Promise<WorkflowExecutionRow>;
  /** Every task row, by ref, iteration, attempt. */
  tasks(id: string): Promise<TaskExecutionRow[]>;
  events(id: string): Promise<WorkflowEventRow[]>;
  audit(id: string): Promise<AuditEventRow[]>;
  pendingDecide(id: string): Promise<boolean>;
}

export function useActionHarness(): ActionHarness {
  const t = useTestDatabase();
  let scripts: QuickJsScriptEvaluator | undefined;
  let blobRoot = "";
  let blobs: FilesystemBlobStore | undefined;
  let namespaceId = "";
  let otherNamespaceId = "";

  beforeAll(async () => {
    scripts = await createQuickJsScriptEvaluator();
    blobRoot = await mkdtemp(path.join(tmpdir(), "nf-actions-"));
    blobs = new FilesystemBlobStore({ root: blobRoot });
    const rows = await t.db
      .insertInto("Namespaces")
      .values([{ name: `ns-${randomUUID().slice(0, 8)}` }, { name: `ns-${randomUUID().slice(0, 8)}` }])
      .returning("id")
      .execute();
    namespaceId = rows[0]!.id;
    otherNamespaceId = rows[1]!.id;
  });
  afterAll(async () => {
    await scripts?.close();
    if (blobRoot !== "") await rm(blobRoot, { recursive: true, force: true });
  });

  const evaluatorDeps = () => ({ db: t.db, scripts: scripts!, blobs: blobs! });

  const harness: ActionHarness = {
    t,
    get namespaceId() {
      return namespaceId;
    },
    get otherNamespaceId() {
      return otherNamespaceId;
    },
    actor: { type: "user", id: "operator-1" },
    get blobs() {
      return blobs!;
    },
    deps: () => ({ db: t.db, blobs: blobs! }),
    async register(definition) {
      const name = `wf_${randomUUID().slice(0, 8)}`;
      const result = await registerWorkflowDefinition(t.db, { namespaceId, definition: { ...definition, name } });
      if (!result.ok) throw new Error(`invalid test definition: ${JSON.stringify(result)}`);
      return name;
    },
    async start(name, input = {}) {
      const started = await startExecution({ db: t.db, blobs: blobs! }, { namespaceId, name, input });
      if (!started.ok) throw new Error(JSON.stringify(started));
      return started.workflowId;
    },
    evaluate: () => evaluateBatch(evaluatorDeps(), { limit: 50 }),
    async drive(handler = () => ({ status: "COMPLETED" }), { queue = "task", rounds = 40 } = {}) {
      return (await driveWorkflows({ db: t.db, evaluator: evaluatorDeps(), namespaceId, handler, queue, rounds })).handled;
    },
    execution: (id) => t.db.selectFrom("WorkflowExecutions").selectAll().where("id", "=", id).executeTakeFirstOrThrow(),
    tasks: (id) =>
      t.db.selectFrom("TaskExecutions").selectAll().where("workflowId", "=", id).orderBy("refName").orderBy("iteration").orderBy("attempt").execute(),
    events: (id) => t.db.selectFrom("WorkflowEvents").selectAll().where("workflowId", "=", id).orderBy("seq").execute(),
    audit: (id) =>
      t.db.selectFrom("AuditEvents").selectAll().where("resourceType", "=", "workflow").where("resourceId", "=", id).orderBy("at").orderBy("id").execute(),
    pendingDecide: async (id) => (await t.db.selectFrom("DecideQueues").select("workflowId").where("workflowId", "=", id).executeTakeFirst()) !== undefined,
  };
  return harness;
}

/** [ref, attempt, status] of each row, for compact assertions. */
export function summary(rows: readonly TaskExecutionRow[]): [string, number, string][] {
  return rows.map((r) => [r.refName, r.attempt, r.status]);
}
