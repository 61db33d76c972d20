import { parseAgentChildRef } from "@/engine";
import type { RunTask } from "./run-model";

/** One turn of an agent as the run page shows it: the model call and the tool calls it asked for. */
export interface AgentTurn {
  turn: number;
  /** The model call's latest attempt, or null before it is scheduled. */
  llm: RunTask | null;
  /** The tool calls' latest attempts, in call order. */
  tools: RunTask[];
  /** The approvals asked before calls, in call order. */
  approvals: RunTask[];
}

/**
 * An agent's turns from the run's task rows: its children are `<agent>#llm`
 * and `<agent>#tool<k>`, their iteration the turn (engine/definition/agent-schema.ts).
 * Each keeps its latest attempt; turns run oldest first.
 */
export function agentTurns(tasks: Iterable<RunTask>, agentRef: string): AgentTurn[] {
  const turns = new Map<number, { llm: RunTask | null; tools: Map<number, RunTask>; approvals: Map<number, RunTask> }>();
  const newer = (a: RunTask | null | undefined, b: RunTask) => (a === null || a === undefined || b.attempt > a.attempt ? b : a);
  for (const t of tasks) {
    const child = parseAgentChildRef(t.ref);
    if (child === undefined || child.agentRef !== agentRef) continue;
    const turn = turns.get(t.iteration) ?? { llm: null, tools: new Map<number, RunTask>(), approvals: new Map<number, RunTask>() };
    turns.set(t.iteration, turn);
    if (child.role === "llm") turn.llm = newer(turn.llm, t);
    else {
      const list = child.role === "tool" ? turn.tools : turn.approvals;
      list.set(child.index, newer(list.get(child.index), t));
    }
  }
  return [...turns.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, { llm, tools, approvals }]) => ({ turn, llm, tools: inOrder(tools), approvals: inOrder(approvals) }));
}

function inOrder(byIndex: ReadonlyMap<number, RunTask>): RunTask[] {
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, t]) => t);
}

/** A tool call's or approval's number in its turn, from 1 (0 for any other ref). */
export function callNumber(ref: string): number {
  const child = parseAgentChildRef(ref);
  return child === undefined || child.role === "llm" ? 0 : child.index + 1;
}
