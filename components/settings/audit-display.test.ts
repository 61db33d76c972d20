import { describe, expect, it } from "vitest";
import { ACTION_FILTERS, actionLabel, actionTone, actorLabel, resourceLabel, shortId, summarizeDetails } from "./audit-display";

describe("audit display", () => {
  it("names known actions and shows unknown ones as their code", () => {
    expect(actionLabel("workflowDefinition.create")).toBe("Saved a workflow version");
    expect(actionLabel("something.new")).toBe("something.new");
    expect(actionTone("apiKey.revoke")).toBe("danger");
    expect(actionTone("auth.signInFailed")).toBe("danger");
    expect(actionTone("auth.signIn")).toBe("default");
    expect(actionTone("group.member.remove")).toBe("danger");
  });

  it("offers each filter once, as a prefix that ends a segment", () => {
    expect(new Set(ACTION_FILTERS.map((f) => f.id)).size).toBe(ACTION_FILTERS.length);
    // "workflow" without its dot would also match "workflowDefinition.create".
    for (const filter of ACTION_FILTERS) expect(filter.prefix === "" || filter.prefix.endsWith(".")).toBe(true);
  });

  it("reads an actor as who, then what kind", () => {
    expect(actorLabel({ type: "user", id: "u", name: "ann@example.com", keyPrefix: null })).toEqual({ primary: "ann@example.com", secondary: "User" });
    expect(actorLabel({ type: "apiKey", id: "k", name: "deploy", keyPrefix: "0123456789ab" })).toEqual({ primary: "deploy", secondary: "API key nf_0123456789ab_…" });
    expect(actorLabel({ type: "system", id: "nf bootstrap", name: null, keyPrefix: null })).toEqual({ primary: "nf bootstrap", secondary: "System" });
    expect(actorLabel({ type: "system", id: null, name: null, keyPrefix: null })).toEqual({ primary: "System", secondary: "" });
    expect(actorLabel({ type: "user", id: "01a229c5-784d-7bfd-a49f-2d70ee2f7296", name: null, keyPrefix: null })).toEqual({
      primary: "Unknown user",
      secondary: "User …ee2f7296",
    });
  });

  it("shortens uuids only", () => {
    expect(shortId("01a229c5-784d-7bfd-a49f-2d70ee2f7296")).toBe("…ee2f7296");
    expect(shortId("orders")).toBe("orders");
    expect(resourceLabel("workflowDefinition", "orders")).toEqual({ kind: "Workflow definition", name: "orders" });
    expect(resourceLabel("odd", null)).toEqual({ kind: "odd", name: "" });
    expect(resourceLabel(null, null)).toBeNull();
  });

  it("summarises details on one line, name bare and version as vN", () => {
    expect(summarizeDetails({ name: "orders", version: 2 })).toBe("orders v2");
    expect(summarizeDetails({ from: "RUNNING", reason: null, tasks: ["a", "b"], nested: { x: 1 }, list: [{ a: 1 }] })).toBe(
      'from: RUNNING · reason: none · tasks: a, b · nested: {"x":1} · list: 1 items',
    );
    expect(summarizeDetails({})).toBe("");
    expect(summarizeDetails({ text: "x".repeat(500) })).toHaveLength(160);
    expect(summarizeDetails({ text: "x".repeat(500) }).endsWith("…")).toBe(true);
  });
});
