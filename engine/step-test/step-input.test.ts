import { describe, expect, it } from "vitest";
import { compile } from "../compile";
import type { WorkflowDefinition } from "../definition";
import { validateDefinition } from "../definition";
import { stepTaskInput } from "./step-input";

const definition: WorkflowDefinition = {
  schemaVersion: 1,
  name: "w",
  variables: { region: "eu" },
  nodes: [
    { ref: "fetch", type: "HTTP", position: { x: 0, y: 0 }, httpRequest: { uri: "https://api.example.com/users/${workflow.input.id}", method: "GET", headers: { Authorization: "Bearer ${workflow.secrets.TOKEN}" } } },
    { ref: "shape", type: "INLINE", position: { x: 0, y: 100 }, evaluatorType: "graaljs", expression: "$.name.toUpperCase()", input: { name: "${fetch.output.response.body.name}", region: "${workflow.variables.region}" } },
    { ref: "wait", type: "WAIT", position: { x: 0, y: 200 }, duration: "1m" },
  ],
  edges: [
    { source: "fetch", target: "shape" },
    { source: "shape", target: "wait" },
  ],
  pins: { fetch: { response: { body: { name: "ada" } } } },
};

describe("a step's input for a test", () => {
  it("reads upstream outputs from the pins and the workflow input from the sample", () => {
    expect(stepTaskInput(definition, "shape", { input: { id: 7 } })).toEqual({
      ok: true,
      taskType: "INLINE",
      input: { name: "ada", region: "eu", evaluatorType: "graaljs", expression: "$.name.toUpperCase()" },
    });
  });

  it("lets a sample output override a pin, and never reads a secret", () => {
    const step = stepTaskInput(definition, "fetch", { input: { id: 7 } });
    expect(step).toMatchObject({ ok: true, taskType: "HTTP" });
    if (!step.ok) return;
    expect(step.input.http_request).toEqual({ uri: "https://api.example.com/users/7", method: "GET", headers: { Authorization: "Bearer ***" } });
    const over = stepTaskInput(definition, "shape", { outputs: { fetch: { response: { body: { name: "bob" } } } } });
    expect(over.ok && over.input.name).toBe("bob");
  });

  it("puts a chat completion's llm fields, resolved, into the task input as the decider does", () => {
    const chat: WorkflowDefinition = {
      ...definition,
      nodes: [
        ...definition.nodes,
        {
          ref: "ask",
          type: "LLM_CHAT_COMPLETE",
          position: { x: 0, y: 300 },
          input: { traceId: "${workflow.input.id}" },
          llm: { llmProvider: "local", model: "m", messages: [{ role: "user", message: "Hi ${fetch.output.response.body.name}, key ${workflow.secrets.K}" }] },
        },
      ],
    };
    expect(stepTaskInput(chat, "ask", { input: { id: 7 } })).toEqual({
      ok: true,
      taskType: "LLM_CHAT_COMPLETE",
      input: { traceId: 7, llmProvider: "local", model: "m", messages: [{ role: "user", message: "Hi ada, key ***" }] },
    });
  });

  it("refuses a node it cannot run alone, naming why", () => {
    expect(stepTaskInput(definition, "wait")).toMatchObject({ ok: false, reason: expect.stringContaining("WAIT") as unknown });
    expect(stepTaskInput(definition, "nope")).toMatchObject({ ok: false });
  });

  it("pins are valid definition data the engine ignores", () => {
    expect(validateDefinition(definition).ok).toBe(true);
    const { pins: _pins, ...unpinned } = definition;
    expect(JSON.stringify(compile(definition))).toBe(JSON.stringify(compile(unpinned)));
  });
});
