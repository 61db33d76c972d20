import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../definition";
import { node, workflow } from "../definition/test-fixtures";
import { replay } from "./replay";
import { simulate } from "./simulate";

/** An agent in the testkit (`nf test`): the model is a worker like any other, keyed by its task type. */
describe("an AGENT simulated", () => {
  it("runs its turns and tools with scripted model answers, and its history replays unchanged", async () => {
    const wf = workflow([
      node("AGENT", "helper", {
        agent: { llmProvider: "p", model: "m", prompt: "Find ${workflow.input.user}", tools: [{ name: "lookup", type: "SIMPLE", taskName: "user_lookup" }] },
      }),
    ]) as unknown as WorkflowDefinition;
    let turn = 0;
    const r = await simulate(
      wf,
      { user: "u1" },
      {
        LLM_CHAT_COMPLETE: ({ input }) => {
          turn++;
          if (turn === 1) return { result: "", toolCalls: [{ id: "c1", name: "lookup", arguments: { id: "u1" } }], tokenUsage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 } };
          const last = (input.messages as { role: string; message: string }[]).at(-1)!;
          return { result: `Found: ${last.message}`, tokenUsage: { promptTokens: 9, completionTokens: 3, totalTokens: 12 } };
        },
        user_lookup: ({ input }) => ({ name: input.id === "u1" ? "Ada" : "?" }),
      },
    );
    expect(r.error).toBeUndefined();
    expect(r.status).toBe("COMPLETED");
    expect(r.output).toMatchObject({ result: 'Found: {"name":"Ada"}', turns: 2, tokenUsage: { totalTokens: 19 } });
    expect(r.tasks.map((t) => `${t.ref}@${t.iteration}:${t.status}`)).toEqual(["helper@0:COMPLETED", "helper#llm@1:COMPLETED", "helper#tool0@1:COMPLETED", "helper#llm@2:COMPLETED"]);
    expect(replay(wf, r.history)).toEqual({ ok: true, evaluations: r.evaluations });
  });
});
