import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { NODE_CATEGORIES, NODE_TYPES, NODE_TYPE_LIST, createNode, fieldValue } from "./node-types";
import { NODE_SCHEMAS, NODE_TYPE_NAMES, WorkflowDefinitionSchema, WorkflowNodeSchema, isNodeOfType, isNodeType } from "./schema";
import type { NodeOfType, SimpleNode, SubWorkflowNode, SwitchNode, WorkflowDefinition, WorkflowEdge, WorkflowNode } from "./schema";
import { TASK_POLICY_DEFAULTS, TaskPolicySchema, effectiveTaskPolicy } from "./task-policy";
import { simple, workflow } from "./test-fixtures";
import { validateDefinition } from "./validate";
import { isWaitUntil, parseWaitDuration } from "./wait-duration";

describe("the node-type registry", () => {
  it("lists every type once, in palette order, with its own schema", () => {
    expect(NODE_TYPE_LIST.map((t) => t.type)).toEqual([...NODE_TYPE_NAMES]);
    for (const info of NODE_TYPE_LIST) {
      expect(info.schema).toBe(NODE_SCHEMAS[info.type]);
      expect(Object.keys(NODE_CATEGORIES)).toContain(info.category);
      expect(info.label.length).toBeGreaterThan(0);
      expect(info.description.length).toBeGreaterThan(0);
      expect(info.icon).toMatch(/^[a-z-]+$/);
    }
  });

  it("marks DO_WHILE as the only container and SWITCH as the only case router", () => {
    expect(NODE_TYPE_LIST.filter((t) => t.isContainer).map((t) => t.type)).toEqual(["DO_WHILE"]);
    expect(NODE_TYPE_LIST.filter((t) => t.acceptsCaseEdges).map((t) => t.type)).toEqual(["SWITCH"]);
  });

  it.each(NODE_TYPE_NAMES.map((t) => [t]))("creates a valid %s from the palette", (type) => {
    const created = createNode(type, "n1", { x: 10, y: 20 });
    expect(created).toMatchObject({ type, ref: "n1", position: { x: 10, y: 20 } });
    expect(NODE_SCHEMAS[type].safeParse(created).success).toBe(true);
    expect(WorkflowNodeSchema.safeParse(created).success).toBe(true);
    // A loop needs a body to be a valid workflow; everything else stands alone.
    const nodes = type === "DO_WHILE" ? [created, simple("body", { parent: "n1" })] : [created];
    const result = validateDefinition(workflow(nodes));
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it("hands out fresh default objects", () => {
    const a = NODE_TYPES.SWITCH.defaultConfig("a");
    a.cases.push("x");
    expect(NODE_TYPES.SWITCH.defaultConfig("b").cases).toEqual([]);
  });

  it("lists expression fields that exist on the schema", () => {
    for (const info of NODE_TYPE_LIST) {
      const shape = (info.schema as unknown as z.ZodObject).shape;
      for (const field of info.expressionFields) expect(Object.keys(shape)).toContain(field[0]);
    }
  });

  it("reads field values by path, own properties only", () => {
    const n = createNode("HTTP", "h", { x: 0, y: 0 });
    expect(fieldValue(n, ["httpRequest", "uri"])).toBe("https://example.com");
    expect(fieldValue(n, ["httpRequest", "constructor"])).toBeUndefined();
    expect(fieldValue(n, ["policy", "cache", "key"])).toBeUndefined();
  });
});

describe("the schemas", () => {
  it("infer the types others build on", () => {
    expectTypeOf<SimpleNode["name"]>().toEqualTypeOf<string>();
    expectTypeOf<SwitchNode["cases"]>().toEqualTypeOf<string[]>();
    expectTypeOf<NodeOfType<"SWITCH">>().toEqualTypeOf<SwitchNode>();
    expectTypeOf<SubWorkflowNode["workflowDefinition"]>().toEqualTypeOf<WorkflowDefinition | undefined>();
    expectTypeOf<WorkflowEdge["case"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<WorkflowDefinition["nodes"]>().toEqualTypeOf<WorkflowNode[]>();
    expectTypeOf<WorkflowNode["type"]>().toEqualTypeOf<(typeof NODE_TYPE_NAMES)[number]>();
  });

  it("turn into JSON Schema for the inspector, with titles, help and defaults", () => {
    for (const type of NODE_TYPE_NAMES) {
      const js = z.toJSONSchema(NODE_SCHEMAS[type]) as { title?: string; properties?: Record<string, unknown> };
      expect(js.title).toBeTruthy();
      expect(js.properties).toHaveProperty("ref");
    }
    const whole = z.toJSONSchema(WorkflowDefinitionSchema) as { properties: Record<string, { default?: unknown }> };
    expect(whole.properties.restartable?.default).toBe(true);
  });

  it("describe every policy field, and their defaults match TASK_POLICY_DEFAULTS", () => {
    for (const [key, schema] of Object.entries(TaskPolicySchema.shape)) {
      expect(schema.description, key).toBeTruthy();
      if (key !== "cache") expect(schema.meta()?.default, key).toEqual(TASK_POLICY_DEFAULTS[key as keyof typeof TASK_POLICY_DEFAULTS]);
    }
  });

  it("narrow nodes by type", () => {
    const n = createNode("SWITCH", "s", { x: 0, y: 0 });
    expect(isNodeOfType(n, "SWITCH") && n.cases).toEqual([]);
    expect(isNodeType("SWITCH")).toBe(true);
    expect(isNodeType("DECISION")).toBe(false);
    expect(isNodeType(3)).toBe(false);
  });
});

describe("effectiveTaskPolicy", () => {
  it("takes each field from the first layer that sets it, else Conductor's default", () => {
    const p = effectiveTaskPolicy({ retryCount: 1 }, { retryCount: 7, retryDelaySeconds: 5 }, undefined);
    expect(p).toMatchObject({ retryCount: 1, retryDelaySeconds: 5, retryLogic: "FIXED", responseTimeoutSeconds: 3600, timeoutPolicy: "TIME_OUT_WF" });
    expect(p.cache).toBeUndefined();
  });

  it("caps the default response timeout at a timeout, but keeps an explicit one", () => {
    expect(effectiveTaskPolicy({ timeoutSeconds: 60 }).responseTimeoutSeconds).toBe(60);
    expect(effectiveTaskPolicy({ timeoutSeconds: 60 }, { responseTimeoutSeconds: 30 }).responseTimeoutSeconds).toBe(30);
    expect(effectiveTaskPolicy({ timeoutSeconds: 0 }).responseTimeoutSeconds).toBe(3600);
  });

  it("carries the cache through", () => {
    expect(effectiveTaskPolicy(undefined, { cache: { key: "k", ttlSeconds: 9 } }).cache).toEqual({ key: "k", ttlSeconds: 9 });
  });
});

describe("wait texts", () => {
  it.each([
    ["10s", 10],
    ["5m", 300],
    ["1h 30m", 5400],
    ["2d", 172800],
    ["1 day 2 hours", 93600],
    ["3 minutes 4 secs", 184],
    ["  7s  ", 7],
  ])("parses the duration %j", (text, seconds) => {
    expect(parseWaitDuration(text)).toBe(seconds);
  });

  it.each(["", "soon", "5", "5x", "30m 1h", "1h ".repeat(40)])("refuses the duration %j", (text) => {
    expect(parseWaitDuration(text)).toBeNull();
  });

  it.each(["2030-01-31", "2030-01-31 09:00", "2030-01-31 09:00 UTC", "2030-01-31T09:00:00Z", "2030-01-31T09:00:00.123+02:00", "2030-01-31 09:00 Europe/Berlin"])(
    "accepts the timestamp %j",
    (text) => {
      expect(isWaitUntil(text)).toBe(true);
    },
  );

  it.each(["tomorrow", "31/01/2030", "2030-01-31T", ""])("refuses the timestamp %j", (text) => {
    expect(isWaitUntil(text)).toBe(false);
  });
});
