import { parseAgentChildRef } from "@/engine";
import type { RunTask } from "./run-model";

/** One turn of an agent as the run page shows it: the model call and the tool calls it asked for. */
export interface AgentTurn {
  turn: number;
  /** The model call's latest attempt, or null before it is scheduled. */
  llm: RunTask | null;
  /** The tool calls' latest attempts, in call order. */
  tools: RunTask[];
}

/**
 * An agent's turns from the run's task rows: its children are `<agent>#llm`
 * and `<agent>#tool<k>`, their iteration the turn (engine/definition/agent-schema.ts).
 * Each keeps its latest attempt; turns run oldest first.
 */
export function agentTurns(tasks: Iterable<RunTask>, agentRef: string): AgentTurn[] {
  const turns = new Map<number, { llm: RunTask | null; tools: Map<number, RunTask> }>();
  const newer = (a: RunTask | null | undefined, b: RunTask) => (a === null || a === undefined || b.attempt > a.attempt ? b : a);
  for (const t of tasks) {
    const child = parseAgentChildRef(t.ref);
    if (child === undefined || child.agentRef !== agentRef) continue;
    const turn = turns.get(t.iteration) ?? { llm: null, tools: new Map<number, RunTask>() };
    turns.set(t.iteration, turn);
    if (child.role === "llm") turn.llm = newer(turn.llm, t);
    else turn.tools.set(child.index, newer(turn.tools.get(child.index), t));
  }
  return [...turns.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, { llm, tools }]) => ({ turn, llm, tools: [...tools.entries()].sort(([a], [b]) => a - b).map(([, t]) => t) }));
}
