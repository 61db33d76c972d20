import { describe, expect, it } from "vitest";
import { NODE_TYPES } from "@/engine";
import { addMessage, messageList, moveMessage, patchMessage, removeMessage } from "./llm-messages-field";

describe("the chat completion's messages editor", () => {
  const stored = [
    { role: "system", message: "Be brief." },
    { role: "user", message: "Hi ${workflow.input.name}" },
    { role: "tool_call", message: "", toolCalls: [{ id: "c1", name: "weather", arguments: {} }] },
  ];

  it("reads a stored list, keeping each message's other keys, and refuses what is no list of messages", () => {
    expect(messageList(stored)).toEqual(stored);
    expect(messageList(undefined)).toEqual([]);
    expect(messageList("${workflow.input.history}")).toBeNull();
    expect(messageList([{ role: 1, message: "x" }])).toBeNull();
    expect(messageList(["hi"])).toBeNull();
  });

  it("adds, edits, moves and removes messages, writing the shape the node stores", () => {
    let list = messageList(stored)!;
    list = addMessage(list);
    expect(list[3]).toEqual({ role: "user", message: "" });
    expect(addMessage([{ role: "user", message: "q" }])[1]!.role).toBe("assistant");
    list = patchMessage(list, 3, { message: "And ${lookup.output.city}?" });
    list = moveMessage(list, 3, -1);
    expect(list.map((m) => m.role)).toEqual(["system", "user", "user", "tool_call"]);
    expect(list[3]).toEqual(stored[2]);
    expect(moveMessage(list, 0, -1)).toEqual(list);
    expect(moveMessage(list, 3, 1)).toEqual(list);
    list = patchMessage(removeMessage(list, 0), 0, { role: "assistant" });
    expect(list.map((m) => [m.role, m.message])).toEqual([
      ["assistant", "Hi ${workflow.input.name}"],
      ["user", "And ${lookup.output.city}?"],
      ["tool_call", ""],
    ]);
    const node = { ref: "ask", type: "LLM_CHAT_COMPLETE", position: { x: 0, y: 0 }, llm: { llmProvider: "p", model: "m", messages: list } };
    expect(NODE_TYPES.LLM_CHAT_COMPLETE.schema.safeParse(node).success).toBe(true);
  });
});
