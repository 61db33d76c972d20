import type { Metrics } from "../lib/metrics";
import type { RunTracer } from "../lib/tracing";
import type { CommittedEvaluation } from "./evaluator";

/**
 * The decider is where runs end and where every task's end is reacted to,
 * exactly once per committed evaluation (invariant 4's watermark): the place
 * that already knows, with the rows in memory. So the run and task workload
 * metrics and the spans are taken here, after the commit, from what the
 * evaluation loaded — a few counter increments and, with tracing on, a span
 * handed to the batch exporter; no statement, no wait.
 */
export function observeCommittedEvaluations(evaluations: readonly CommittedEvaluation[], sinks: { metrics?: Metrics; tracer?: RunTracer }): void {
  const { metrics, tracer } = sinks;
  for (const { workflow: wf, endedTasks, retried, ending } of evaluations) {
    // Every committed evaluation bumps "version" from 0: the first one is the run's start, whoever started it (REST,
    // Conductor, a webhook, a schedule, a parent). Counted here rather than in each start path so that a start in a
    // transaction that rolls back (a parent's evaluation, a schedule's fire) is never counted, and every run is
    // counted once. Not counted: a run an operator paused or terminated before its first evaluation.
    if (Number(wf.version) === 0) metrics?.countRunStarted(wf.defName);
    for (const task of endedTasks) {
      const endedAt = task.endedAt!;
      const startedAt = task.startedAt ?? task.scheduledAt;
      metrics?.observeTaskEnded({
        workflow: wf.defName,
        taskType: task.taskType,
        taskDefName: task.taskDefName,
        status: task.status,
        durationMs: endedAt.getTime() - startedAt.getTime(),
      });
      tracer?.taskEnded({
        workflowId: wf.id,
        taskId: task.id,
        refName: task.refName,
        taskType: task.taskType,
        taskDefName: task.taskDefName,
        iteration: task.iteration,
        attempt: task.attempt,
        status: task.status,
        scheduledAt: task.scheduledAt,
        startedAt: task.startedAt,
        endedAt,
        workerId: task.workerId,
        reasonForIncompletion: task.reasonForIncompletion,
        retried: retried.has(`${task.refName}\u0000${task.iteration}`),
      });
    }
    if (ending) {
      metrics?.observeRunFinished(wf.defName, ending.status, ending.at.getTime() - wf.startedAt.getTime());
      tracer?.runEnded({
        workflowId: wf.id,
        workflowName: wf.defName,
        workflowVersion: wf.defVersion,
        namespaceId: wf.namespaceId,
        status: ending.status,
        startedAt: wf.startedAt,
        endedAt: ending.at,
        reasonForIncompletion: ending.reasonForIncompletion,
        correlationId: wf.correlationId,
        parentWorkflowId: wf.parentWorkflowId,
        parentTaskId: wf.parentTaskId,
      });
    }
  }
}
