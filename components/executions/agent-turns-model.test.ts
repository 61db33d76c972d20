import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "@/engine";
import { agentTurns } from "./agent-turns-model";
import { overlayModel } from "./run-model";
import type { RunTask } from "./run-model";

const task = (ref: string, iteration: number, attempt = 0, status: RunTask["status"] = "COMPLETED"): RunTask => ({
  id: `${ref}@${iteration}#${attempt}`,
  ref,
  type: ref.endsWith("#llm") ? "LLM_CHAT_COMPLETE" : "HTTP",
  iteration,
  attempt,
  status,
  scheduledAt: "2026-01-01T00:00:00Z",
  startedAt: null,
  endedAt: null,
  workerId: null,
  pollCount: 0,
  reasonForIncompletion: null,
  subWorkflowId: null,
  parentRef: ref.includes("#") ? ref.slice(0, ref.indexOf("#")) : null,
  forkIndex: null,
});

describe("agentTurns", () => {
  it("groups an agent's rows by turn, model call first, tool calls in call order, latest attempts only", () => {
    const turns = agentTurns(
      [
        task("a#tool1", 1),
        task("a#llm", 2, 0, "FAILED"),
        task("a#llm", 1),
        task("a#tool0", 1, 0, "FAILED"),
        task("a#tool0", 1, 1),
        task("a#llm", 2, 1, "IN_PROGRESS"),
        task("other#llm", 1),
        task("a", 0, 0, "IN_PROGRESS"),
        task("a#approve1", 1, 0, "COMPLETED"),
      ],
      "a",
    );
    expect(turns.map((t) => [t.turn, t.llm?.id, t.tools.map((x) => x.id), t.approvals.map((x) => x.id)])).toEqual([
      [1, "a#llm@1#0", ["a#tool0@1#1", "a#tool1@1#0"], ["a#approve1@1#0"]],
      [2, "a#llm@2#1", [], []],
    ]);
  });
});

describe("an agent on the run's diagram", () => {
  it("shows the turn it is on, and its steps are no nodes of their own", () => {
    const definition = { schemaVersion: 1, name: "w", nodes: [{ ref: "a", type: "AGENT", position: { x: 0, y: 0 } }], edges: [] } as unknown as WorkflowDefinition;
    const model = overlayModel(definition, [task("a", 0, 0, "IN_PROGRESS"), task("a#llm", 1), task("a#tool0", 1), task("a#llm", 2, 0, "IN_PROGRESS")], new Map());
    expect(model.nodes.get("a")).toMatchObject({ status: "IN_PROGRESS", turns: 2 });
    expect([...model.nodes.keys()]).toEqual(["a"]);
  });
});
