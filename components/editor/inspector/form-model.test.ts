import { describe, expect, it } from "vitest";
import { NODE_TYPE_NAMES } from "@/engine";
import type { FieldSpec } from "./form-model";
import type { Problem } from "@/engine";
import { assignProblems, fieldIds, getIn, nodeFormModel, nodeRelativePath, problemsUnder, setIn, settingsRelativePath, workflowFormModel } from "./form-model";

function find(fields: readonly FieldSpec[], id: string): FieldSpec | undefined {
  for (const f of fields) {
    if (f.id === id) return f;
    const inner = f.children ? find(f.children, id) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

describe("nodeFormModel", () => {
  it("builds a form for every node type", () => {
    for (const type of NODE_TYPE_NAMES) {
      const model = nodeFormModel(type);
      expect(model.common.map((f) => f.id)).toEqual(["ref", "label", "description", "name"]);
      expect(model.optional?.kind).toBe("boolean");
      expect(model.policy.length).toBeGreaterThan(10);
      const all = [...model.common, ...model.specific, ...model.policy];
      expect(fieldIds(all).some((id) => id === "position" || id === "type" || id === "parent")).toBe(false);
    }
  });

  it("takes titles, descriptions and defaults from the engine's schema", () => {
    const http = nodeFormModel("HTTP");
    const method = find(http.specific, "httpRequest.method");
    expect(method).toMatchObject({ title: "Method", kind: "expression", defaultValue: "GET", completions: true });
    expect(method?.options).toContain("POST");
    expect(find(http.specific, "httpRequest.uri")).toMatchObject({ kind: "expression", required: true, title: "URI" });
    expect(find(http.specific, "httpRequest.headers")).toMatchObject({ kind: "json", jsonObject: true, completions: true });
    expect(find(http.specific, "httpRequest.body")).toMatchObject({ kind: "json", completions: true });
    expect(find(http.specific, "httpRequest.readTimeOut")).toMatchObject({ kind: "integer", defaultValue: 150, minimum: 0 });
    expect(find(http.policy, "policy.retryCount")).toMatchObject({ kind: "integer", title: "Retries", defaultValue: 3 });
    expect(find(http.policy, "policy.retryLogic")).toMatchObject({ kind: "enum", options: ["FIXED", "LINEAR_BACKOFF", "EXPONENTIAL_BACKOFF"] });
    expect(find(http.policy, "policy.cache.key")).toMatchObject({ kind: "expression", completions: true });
    expect(find(http.policy, "policy.inputTemplate")).toMatchObject({ kind: "json", completions: true });
  });

  it("names the SIMPLE node's required name 'Task type'", () => {
    expect(nodeFormModel("SIMPLE").common.find((f) => f.id === "name")).toMatchObject({ title: "Task type", required: true, kind: "text" });
    expect(nodeFormModel("HTTP").common.find((f) => f.id === "name")).toMatchObject({ title: "Task definition", required: false });
  });

  it("knows scripts, lists, flags and JSON values", () => {
    expect(find(nodeFormModel("INLINE").specific, "expression")).toMatchObject({ kind: "script", language: "javascript" });
    expect(find(nodeFormModel("SWITCH").specific, "expression")).toMatchObject({ kind: "script", language: "switch" });
    expect(find(nodeFormModel("DO_WHILE").specific, "loopCondition")).toMatchObject({ kind: "script", language: "javascript" });
    expect(find(nodeFormModel("JSON_JQ_TRANSFORM").specific, "queryExpression")).toMatchObject({ kind: "script", language: "jq" });
    expect(find(nodeFormModel("SWITCH").specific, "cases")).toMatchObject({ kind: "string-list" });
    expect(find(nodeFormModel("SWITCH").specific, "evaluatorType")).toMatchObject({ kind: "enum", defaultValue: "value-param" });
    expect(find(nodeFormModel("HUMAN").specific, "outcomes")).toMatchObject({ kind: "string-list" });
    expect(find(nodeFormModel("JOIN").specific, "joinOn")).toMatchObject({ kind: "string-list" });
    expect(find(nodeFormModel("WAIT").specific, "signal")).toMatchObject({ kind: "flag" });
    expect(find(nodeFormModel("WAIT").specific, "duration")).toMatchObject({ kind: "expression" });
    expect(find(nodeFormModel("DO_WHILE").specific, "items")).toMatchObject({ kind: "json", completions: true });
    expect(find(nodeFormModel("HUMAN").specific, "form.schema")).toMatchObject({ kind: "json", completions: false });
    expect(find(nodeFormModel("SUB_WORKFLOW").specific, "workflowDefinition")).toMatchObject({ kind: "json" });
    expect(find(nodeFormModel("SUB_WORKFLOW").specific, "subWorkflowParam")).toMatchObject({ kind: "group" });
    expect(find(nodeFormModel("SET_VARIABLE").specific, "input")).toMatchObject({ kind: "json", jsonObject: true, completions: true });
  });

  it("puts input last among the type's fields", () => {
    const ids = nodeFormModel("SWITCH").specific.map((f) => f.id);
    expect(ids.at(-1)).toBe("input");
  });

  it("adds the group's title to a title that appears twice in one form", () => {
    const start = nodeFormModel("START_WORKFLOW");
    expect(find(start.specific, "input")?.label).toBe("Input");
    expect(find(start.specific, "startWorkflow.input")?.label).toBe("Input (Workflow to start)");
    expect(find(start.specific, "startWorkflow.name")?.label).toBe("Workflow");
  });

  it("lists optional objects for pruning", () => {
    const model = nodeFormModel("HTTP");
    expect(model.optionalObjects).toEqual(expect.arrayContaining([["policy"], ["policy", "cache"]]));
    expect(model.optionalObjects).not.toContainEqual(["httpRequest"]);
  });
});

describe("workflowFormModel", () => {
  it("has the settings fields and not the graph", () => {
    const ids = workflowFormModel().map((f) => f.id);
    expect(ids).toEqual(["name", "description", "inputSchema", "outputParameters", "variables", "timeoutSeconds", "timeoutPolicy", "failureWorkflow", "restartable", "ownerEmail", "tags"]);
    const byId = new Map(workflowFormModel().map((f) => [f.id, f]));
    expect(byId.get("tags")?.kind).toBe("tags");
    expect(byId.get("outputParameters")).toMatchObject({ kind: "json", completions: true });
    expect(byId.get("restartable")).toMatchObject({ kind: "boolean", defaultValue: true });
    expect(byId.get("timeoutPolicy")).toMatchObject({ kind: "enum", defaultValue: "ALERT_ONLY" });
  });
});

describe("assignProblems", () => {
  const problem = (path: (string | number)[]): Problem => ({ code: "invalid-field", message: path.join("/"), ref: "n", path });
  const ids = fieldIds(nodeFormModel("HTTP").specific).concat(["ref", "name"]);

  it("sends each problem to the deepest field containing it", () => {
    const assigned = assignProblems(
      [problem(["nodes", 3, "httpRequest", "uri"]), problem(["nodes", 3, "input", "url"]), problem(["nodes", 3, "httpRequest"]), problem(["nodes", 3, "ref"])],
      ids,
      nodeRelativePath,
    );
    expect(assigned.byField.get("httpRequest.uri")?.map((p) => p.message)).toEqual(["nodes/3/httpRequest/uri"]);
    expect(assigned.byField.get("input")?.length).toBe(1);
    expect(assigned.byField.get("httpRequest")?.length).toBe(1);
    expect(assigned.byField.get("ref")?.length).toBe(1);
    expect(problemsUnder(assigned, "httpRequest").length).toBe(2);
    expect(assigned.other).toEqual([]);
  });

  it("keeps edge problems, the node itself and unknown keys apart", () => {
    const assigned = assignProblems([problem(["edges", 2, "case"]), problem(["nodes", 3]), problem(["nodes", 3, "typo"])], ids, nodeRelativePath);
    expect(assigned.other.length).toBe(3);
  });

  it("reads settings paths as they are, without the graph's", () => {
    const settings = fieldIds(workflowFormModel());
    const assigned = assignProblems([problem(["ownerEmail"]), problem(["nodes"]), problem(["outputParameters", "x"])], settings, settingsRelativePath);
    expect([...assigned.byField.keys()].sort()).toEqual(["outputParameters", "ownerEmail"]);
    expect(assigned.other.length).toBe(1);
  });
});

describe("setIn / getIn", () => {
  it("sets immutably, sharing what is off the path", () => {
    const node = { ref: "a", httpRequest: { uri: "u", headers: { x: 1 } }, input: { k: 1 } };
    const next = setIn(node, ["httpRequest", "uri"], "v");
    expect(next).toEqual({ ref: "a", httpRequest: { uri: "v", headers: { x: 1 } }, input: { k: 1 } });
    expect(node.httpRequest.uri).toBe("u");
    expect(next.input).toBe(node.input);
    expect(next.httpRequest.headers).toBe(node.httpRequest.headers);
  });

  it("removes a key set to undefined, and an optional object left empty", () => {
    const node = { ref: "a", policy: { cache: { key: "k" } } };
    const optional = [["policy"], ["policy", "cache"]];
    expect(setIn(node, ["policy", "cache", "key"], undefined, optional)).toEqual({ ref: "a" });
    expect(setIn({ ref: "a", policy: { retryCount: 1 } }, ["policy", "retryCount"], undefined, optional)).toEqual({ ref: "a" });
    // A required object stays, even empty.
    expect(setIn({ httpRequest: { uri: "u" } }, ["httpRequest", "uri"], undefined, optional)).toEqual({ httpRequest: {} });
  });

  it("creates missing objects on the way", () => {
    expect(setIn({ ref: "a" }, ["policy", "cache", "ttlSeconds"], 5)).toEqual({ ref: "a", policy: { cache: { ttlSeconds: 5 } } });
  });

  it("reads own keys only", () => {
    expect(getIn({ a: { b: 1 } }, ["a", "b"])).toBe(1);
    expect(getIn({ a: 1 }, ["a", "b"])).toBeUndefined();
    expect(getIn({}, ["toString"])).toBeUndefined();
  });
});
