import type { Db } from "../../db/pool";
import type { TaskExecutionRow } from "../../db/schema";
import { evaluateBatch } from "../evaluator/evaluator";
import type { EvaluatorDeps } from "../evaluator/evaluator";
import { completeTaskFromWorker } from "../store/task-executions";
import { leaseTasks } from "../store/task-queues";
import type { WorkerFinalStatus } from "../store/task-executions";

/** What a test's worker answers for one task. */
export interface DrivenResult {
  status: WorkerFinalStatus;
  output?: Record<string, unknown>;
  reason?: string;
}

export interface DriveWorkflowsOptions {
  db: Db;
  evaluator: EvaluatorDeps;
  namespaceId: string;
  handler: (task: TaskExecutionRow) => DrivenResult;
  /** The worker queue to work; "task" by default (the fixtures' SIMPLE task name). */
  queue?: string;
  /** Evaluate-and-work rounds at most; 60 by default. */
  rounds?: number;
}

/**
 * Drives workflows in-process, round by round: evaluate what is queued, lease
 * and complete the queue's tasks as a worker would, until a round moves
 * nothing. For tests of the evaluator and the operator actions, where a
 * sidecar process would only add timing; the whole-loop tests use one
 * (runtime*.int.test.ts). A refused report throws: a correct run has none.
 */
export async function driveWorkflows(options: DriveWorkflowsOptions): Promise<{ handled: TaskExecutionRow[]; settled: boolean }> {
  const { db, evaluator, namespaceId, handler, queue = "task", rounds = 60 } = options;
  const handled: TaskExecutionRow[] = [];
  for (let round = 0; round < rounds; round++) {
    const evaluated = await evaluateBatch(evaluator, { limit: 50 });
    const leased = await leaseTasks(db, { queueName: queue, namespaceId, count: 20, leaseSeconds: 30, owner: "w1" });
    for (const { task } of leased) {
      handled.push(task);
      const result = handler(task);
      const report = await completeTaskFromWorker(db, {
        namespaceId,
        workflowId: task.workflowId,
        taskId: task.id,
        status: result.status,
        output: result.output ?? {},
        reason: result.reason ?? null,
        workerId: "w1",
      });
      if (!report.ok) throw new Error(`worker report refused: ${JSON.stringify(report)}`);
    }
    if (evaluated === 0 && leased.length === 0) return { handled, settled: true };
  }
  return { handled, settled: false };
}
