"use client";

import { Disclosure } from "@heroui/react";
import { TaskStatusChip } from "./run-status-chip";
import { formatDuration } from "./run-status";
import { agentTurns, callNumber } from "./agent-turns-model";
import type { RunTask } from "./run-model";

function duration(t: RunTask): string {
  if (t.startedAt === null) return "waiting";
  return formatDuration((t.endedAt === null ? Date.now() : Date.parse(t.endedAt)) - Date.parse(t.startedAt));
}

function StepRow({ task, label }: { task: RunTask; label: string }) {
  return (
    <li className="flex flex-col gap-0.5 rounded-md border border-separator px-2 py-1.5" data-task-ref={task.ref}>
      <div className="flex items-center gap-2">
        <span className="text-xs font-medium text-foreground">{label}</span>
        <span className="font-mono text-[11px] text-muted">{task.type}</span>
        <span className="ml-auto flex items-center gap-2">
          <span className="text-xs text-muted">{duration(task)}</span>
          <TaskStatusChip status={task.status} />
        </span>
      </div>
      {task.attempt > 0 ? <span className="text-xs text-muted">attempt {task.attempt + 1}</span> : null}
      {task.reasonForIncompletion ? <p className="text-xs text-danger">{task.reasonForIncompletion}</p> : null}
    </li>
  );
}

/** An agent's turns, each expandable to its model call and tool calls, live as the rows change. */
export function AgentTurns({ agentRef, tasks }: { agentRef: string; tasks: Iterable<RunTask> }) {
  const turns = agentTurns(tasks, agentRef);
  return (
    <div data-testid="agent-turns">
      <h4 className="pb-1 text-xs font-semibold tracking-wide text-muted uppercase">Turns</h4>
      {turns.length === 0 ? <p className="text-xs text-muted">No turn has started yet.</p> : null}
      <ol aria-label="Agent turns" className="flex flex-col gap-2">
        {turns.map((t, i) => (
          <li key={t.turn}>
            <Disclosure className="rounded-lg border border-separator" defaultExpanded={i === turns.length - 1}>
              <Disclosure.Heading>
                <Disclosure.Trigger className="flex w-full items-center gap-2 px-2.5 py-2 text-left text-sm">
                  <span className="flex-1 font-medium text-foreground">
                    Turn {t.turn}
                    <span className="pl-2 text-xs font-normal text-muted">{t.tools.length === 0 ? "no tool calls" : t.tools.length === 1 ? "1 tool call" : `${t.tools.length} tool calls`}</span>
                  </span>
                  {t.llm ? <TaskStatusChip status={t.llm.status} /> : null}
                  <Disclosure.Indicator />
                </Disclosure.Trigger>
              </Disclosure.Heading>
              <Disclosure.Content>
                <Disclosure.Body className="px-2.5 pb-2.5">
                  <ol className="flex flex-col gap-1">
                    {t.llm ? <StepRow label="Model" task={t.llm} /> : null}
                    {t.approvals.map((a) => (
                      <StepRow key={a.id} label={`Approval of call ${callNumber(a.ref)}`} task={a} />
                    ))}
                    {t.tools.map((tool) => (
                      <StepRow key={tool.id} label={`Tool call ${callNumber(tool.ref)}`} task={tool} />
                    ))}
                  </ol>
                </Disclosure.Body>
              </Disclosure.Content>
            </Disclosure>
          </li>
        ))}
      </ol>
    </div>
  );
}
