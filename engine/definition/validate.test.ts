import { describe, expect, it } from "vitest";
import { brief, chain, edge, node, simple, workflow } from "./test-fixtures";
import type { Json } from "./test-fixtures";
import { validateDefinition } from "./validate";

type Expected = { code: string; ref?: string; path: (string | number)[]; severity?: "warning" };

/** Errors, then warnings (each marked), in the order validation found them. */
function problemsOf(def: unknown): Expected[] {
  const result = validateDefinition(def);
  return [...(result.ok ? [] : brief(result.problems)), ...brief(result.warnings).map((w) => ({ ...w, severity: "warning" }))];
}

const valid: [string, Json][] = [
  ["a single worker task", workflow([simple("a")])],
  [
    "a chain reading upstream outputs and workflow input",
    workflow(
      [
        simple("a", { input: { id: "${workflow.input.id}" } }),
        simple("b", { input: { x: "${a.output.x}", all: "${a.output}" } }),
        simple("c", { input: { both: ["${a.output.x}", { y: "${b.output.y}" }], vars: "${workflow.variables.v}" } }),
      ],
      chain("a", "b", "c"),
      { outputParameters: { result: "${c.output.result}", early: "${a.output}" }, variables: { v: 1, label: "${workflow.input.label}" } },
    ),
  ],
  [
    "a fork by two outgoing edges and a join by two incoming",
    workflow(
      [simple("a"), simple("b"), simple("c"), simple("d", { input: { b: "${b.output}", c: "${c.output}", a: "${a.output}" } })],
      [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")],
    ),
  ],
  ["several start nodes running in parallel", workflow([simple("a"), simple("b"), simple("c")], [edge("a", "c"), edge("b", "c")])],
  [
    "a SWITCH whose branches merge, default straight to the merge",
    workflow(
      [
        simple("a"),
        node("SWITCH", "sw", { cases: ["x", "y"], input: { switchCaseValue: "${a.output.kind}" } }),
        simple("bx"),
        simple("by"),
        node("NOOP", "merge"),
        simple("after", { input: { x: "${bx.output}", y: "${by.output}" } }),
      ],
      [edge("a", "sw"), edge("sw", "bx", "x"), edge("sw", "by", "y"), edge("sw", "merge", "default"), edge("bx", "merge"), edge("by", "merge"), edge("merge", "after")],
    ),
  ],
  [
    "a javascript SWITCH routing two cases to one node, and an EXCLUSIVE_JOIN",
    workflow(
      [
        node("SWITCH", "sw", { evaluatorType: "javascript", expression: "$.n > 1 ? 'big' : 'small'", cases: ["big", "small"], input: {} }),
        simple("both"),
        simple("other"),
        node("EXCLUSIVE_JOIN", "xj", { joinOn: ["both", "other"], defaultExclusiveJoinTask: ["sw"] }),
      ],
      [edge("sw", "both", "big"), edge("sw", "both", "small"), edge("sw", "other", "default"), edge("both", "xj"), edge("other", "xj")],
    ),
  ],
  [
    "a SWITCH case ending in TERMINATE beside a branch that continues",
    workflow(
      [node("SWITCH", "sw", { cases: ["stop"] }), node("TERMINATE", "t", { terminationStatus: "FAILED", terminationReason: "${workflow.input.why}" }), simple("go"), simple("end")],
      [edge("sw", "t", "stop"), edge("sw", "go", "default"), edge("go", "end")],
    ),
  ],
  [
    "an explicit JOIN on its branches",
    workflow([simple("a"), simple("b"), simple("c"), node("JOIN", "j", { joinOn: ["b", "c"] })], [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("c", "j")]),
  ],
  [
    "a DO_WHILE (condition form) whose body reads the loop and what precedes it, and is read after it",
    workflow(
      [
        simple("before"),
        node("DO_WHILE", "loop", { loopCondition: "$.more", input: { more: "${step2.output.more}" }, keepLastN: 2 }),
        simple("step1", { parent: "loop", input: { i: "${loop.output.iteration}", b: "${before.output}" } }),
        simple("step2", { parent: "loop", input: { s: "${step1.output}" } }),
        simple("after", { input: { last: "${step2.output}", loop: "${loop.output}" } }),
      ],
      [edge("before", "loop"), edge("step1", "step2"), edge("loop", "after")],
    ),
  ],
  [
    "a DO_WHILE (items form) with a parallel body",
    workflow(
      [node("DO_WHILE", "each", { loopCondition: undefined, items: "${workflow.input.orders}" }), simple("x", { parent: "each" }), simple("y", { parent: "each" })],
      [],
    ),
  ],
  [
    "dynamic forks in both forms, then nodes reading them",
    workflow(
      [
        simple("plan"),
        node("FORK_JOIN_DYNAMIC", "fan", { items: "${plan.output.items}", forkTaskType: "SUB_WORKFLOW", forkTaskVersion: 2 }),
        node("FORK_JOIN_DYNAMIC", "classic", {
          forkTaskName: undefined,
          items: undefined,
          dynamicForkTasksParam: "tasks",
          dynamicForkTasksInputParamName: "inputs",
          input: { tasks: "${plan.output.tasks}", inputs: "${plan.output.inputs}" },
        }),
        simple("done", { input: { fan: "${fan.output}", classic: "${classic.output}" } }),
      ],
      [edge("plan", "fan"), edge("plan", "classic"), edge("fan", "done"), edge("classic", "done")],
    ),
  ],
  [
    "sub-workflows: registered, and inline with its own refs",
    workflow(
      [
        simple("a"),
        node("SUB_WORKFLOW", "reg", { subWorkflowParam: { name: "child", version: 3 }, input: { x: "${a.output.x}" } }),
        node("SUB_WORKFLOW", "inl", {
          subWorkflowParam: undefined,
          workflowDefinition: workflow([simple("a"), simple("inner", { input: { v: "${a.output}" } })], chain("a", "inner")),
        }),
      ],
      chain("a", "reg", "inl"),
    ),
  ],
  [
    "waits of every form, a human task, start-workflow, event, variables, dynamic task",
    workflow(
      [
        node("WAIT", "w1", { duration: "1h 30m" }),
        node("WAIT", "w2", { duration: undefined, until: "2030-01-31 09:00 UTC" }),
        node("WAIT", "w3", { duration: undefined, until: "${workflow.input.deadline}" }),
        node("WAIT", "w4", { duration: undefined, signal: true }),
        node("HUMAN", "approve", { assignee: "group:finance", form: { schema: { type: "object" } }, dueIn: "2d" }),
        node("HUMAN", "approve2", {
          title: "Approve ${workflow.input.id}",
          assignee: "user:${workflow.input.manager}",
          approvals: 2,
          allowSelfApproval: false,
          form: { template: { name: "expense", version: 3 } },
          outcomes: ["approve", "reject"],
          dueIn: "1d",
          escalation: [{ action: "reassign", assignee: "role:admin", dueIn: "4h" }, { action: "complete", outcome: "reject", data: { note: "late" } }, { action: "timeout" }],
        }),
        node("START_WORKFLOW", "kick", { startWorkflow: { name: "other", input: { by: "${approve.output.outcome}" } } }),
        node("EVENT", "notify", { sink: "conductor:events" }),
        node("SET_VARIABLE", "setv", { input: { approved: "${approve.output.outcome}" } }),
        node("DYNAMIC", "dyn"),
      ],
      chain("w1", "w2", "w3", "w4", "approve", "approve2", "kick", "notify", "setv", "dyn"),
    ),
  ],
  [
    "system tasks with policies and expressions in their config",
    workflow(
      [
        node("HTTP", "call", {
          httpRequest: { uri: "https://api.example.com/${workflow.input.id}", method: "POST", headers: { auth: "${workflow.input.token}" }, body: { a: [1, 2] }, readTimeOut: 1000 },
          policy: { retryCount: 5, retryLogic: "EXPONENTIAL_BACKOFF", timeoutSeconds: 60, responseTimeoutSeconds: 30, cache: { key: "${workflow.input.id}", ttlSeconds: 60 } },
          optional: true,
        }),
        node("INLINE", "calc", { input: { value: "${call.output.response.body.n}" } }),
        node("JSON_JQ_TRANSFORM", "shape", { queryExpression: ".a | {b: .}", input: { a: "${calc.output.result}" } }),
      ],
      chain("call", "calc", "shape"),
      { timeoutSeconds: 600, timeoutPolicy: "TIME_OUT_WF", restartable: false, failureWorkflow: "cleanup", ownerEmail: "ops@example.com", tags: [{ key: "team", value: "ops" }], inputSchema: { type: "object" }, version: 2, description: "d" },
    ),
  ],
  [
    "secrets and variables in dispatched task input",
    workflow(
      [
        node("HTTP", "call", {
          httpRequest: { uri: "${workflow.env.BASE}/items/${workflow.input.id}", headers: { Authorization: "Bearer ${workflow.secrets.TOKEN}" }, body: { key: "${workflow.secrets['KEY']}" } },
        }),
        node("INLINE", "calc", { input: { key: "${workflow.secrets.KEY}" } }),
        simple("work", { input: { region: "${workflow.env.REGION}" }, policy: { inputTemplate: { token: "${workflow.secrets.TOKEN}" } } }),
      ],
      chain("call", "calc", "work"),
    ),
  ],
];

describe("validateDefinition accepts", () => {
  it.each(valid)("%s", (_name, def) => {
    const result = validateDefinition(def);
    expect(result.ok ? [] : brief(result.problems)).toEqual([]);
    expect(result.ok && result.definition).toBe(def);
  });
});

const invalid: [string, unknown, Expected[]][] = [
  // Envelope.
  ["a non-object", 5, [{ code: "invalid-field", path: [] }]],
  ["an array", [], [{ code: "invalid-field", path: [] }]],
  ["a wrong schemaVersion", workflow([simple("a")], [], { schemaVersion: 2 }), [{ code: "invalid-field", path: ["schemaVersion"] }]],
  ["a missing name", workflow([simple("a")], [], { name: undefined }), [{ code: "missing-field", path: ["name"] }]],
  ["a name with ':'", workflow([simple("a")], [], { name: "a:b" }), [{ code: "invalid-field", path: ["name"] }]],
  ["an unknown top-level field", workflow([simple("a")], [], { bogus: true }), [{ code: "unknown-field", path: ["bogus"] }]],
  ["nodes that are not an array", workflow([], [], { nodes: {} }), [{ code: "invalid-field", path: ["nodes"] }]],
  ["zero nodes", workflow([]), [{ code: "empty-workflow", path: ["nodes"] }]],
  ["a bad workflow timeoutPolicy", workflow([simple("a")], [], { timeoutPolicy: "RETRY" }), [{ code: "invalid-field", path: ["timeoutPolicy"] }]],
  ["a bad ownerEmail", workflow([simple("a")], [], { ownerEmail: "nope" }), [{ code: "invalid-field", path: ["ownerEmail"] }]],
  // Node shape.
  ["a node that is not an object", workflow([simple("a"), "b"]), [{ code: "invalid-field", path: ["nodes", 1] }]],
  ["a node without a type", workflow([{ ref: "a", position: { x: 0, y: 0 } }]), [{ code: "missing-field", ref: "a", path: ["nodes", 0, "type"] }]],
  ["an unknown node type", workflow([simple("a", { type: "KAFKA" })]), [{ code: "unknown-node-type", ref: "a", path: ["nodes", 0, "type"] }]],
  ["a ref that is not an identifier", workflow([simple("1a")]), [{ code: "invalid-field", ref: "1a", path: ["nodes", 0, "ref"] }]],
  ["the reserved ref workflow", workflow([simple("workflow")]), [{ code: "reserved-ref", ref: "workflow", path: ["nodes", 0, "ref"] }]],
  ["a SIMPLE task named like a built-in queue", workflow([simple("a", { name: "HTTP" })]), [{ code: "reserved-name", ref: "a", path: ["nodes", 0, "name"] }]],
  ["a missing position", workflow([simple("a", { position: undefined })]), [{ code: "missing-field", ref: "a", path: ["nodes", 0, "position"] }]],
  ["a SIMPLE without a name", workflow([simple("a", { name: undefined })]), [{ code: "missing-field", ref: "a", path: ["nodes", 0, "name"] }]],
  ["an unknown node field", workflow([simple("a", { colour: "red" })]), [{ code: "unknown-field", ref: "a", path: ["nodes", 0, "colour"] }]],
  ["a negative retryCount", workflow([simple("a", { policy: { retryCount: -1 } })]), [{ code: "invalid-field", ref: "a", path: ["nodes", 0, "policy", "retryCount"] }]],
  ["an unknown retryLogic", workflow([simple("a", { policy: { retryLogic: "RANDOM" } })]), [{ code: "invalid-field", ref: "a", path: ["nodes", 0, "policy", "retryLogic"] }]],
  [
    "a response timeout beyond the timeout",
    workflow([simple("a", { policy: { timeoutSeconds: 10, responseTimeoutSeconds: 20 } })]),
    [{ code: "response-timeout-over-timeout", ref: "a", path: ["nodes", 0, "policy", "responseTimeoutSeconds"], severity: "warning" }],
  ],
  ["a cache without a ttl", workflow([simple("a", { policy: { cache: { key: "k" } } })]), [{ code: "missing-field", ref: "a", path: ["nodes", 0, "policy", "cache", "ttlSeconds"] }]],
  ["an HTTP node without a request", workflow([node("HTTP", "h", { httpRequest: undefined })]), [{ code: "missing-field", ref: "h", path: ["nodes", 0, "httpRequest"] }]],
  ["an HTTP request without a uri", workflow([node("HTTP", "h", { httpRequest: { method: "GET" } })]), [{ code: "missing-field", ref: "h", path: ["nodes", 0, "httpRequest", "uri"] }]],
  ["an unknown HTTP method", workflow([node("HTTP", "h", { httpRequest: { uri: "u", method: "FETCH" } })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "httpRequest", "method"] }]],
  ["an INLINE in python", workflow([node("INLINE", "i", { evaluatorType: "python" })]), [{ code: "invalid-field", ref: "i", path: ["nodes", 0, "evaluatorType"] }]],
  ["an INLINE without a script", workflow([node("INLINE", "i", { expression: undefined })]), [{ code: "missing-field", ref: "i", path: ["nodes", 0, "expression"] }]],
  ["a jq node without a query", workflow([node("JSON_JQ_TRANSFORM", "j", { queryExpression: undefined })]), [{ code: "missing-field", ref: "j", path: ["nodes", 0, "queryExpression"] }]],
  ["an EVENT without a sink", workflow([node("EVENT", "e", { sink: undefined })]), [{ code: "missing-field", ref: "e", path: ["nodes", 0, "sink"] }]],
  ["a TERMINATE with a bad status", workflow([node("TERMINATE", "t", { terminationStatus: "DONE" })]), [{ code: "invalid-field", ref: "t", path: ["nodes", 0, "terminationStatus"] }]],
  ["a START_WORKFLOW without a name", workflow([node("START_WORKFLOW", "s", { startWorkflow: {} })]), [{ code: "missing-field", ref: "s", path: ["nodes", 0, "startWorkflow", "name"] }]],
  // Config spanning fields.
  ["a value-param SWITCH naming a missing input key", workflow([node("SWITCH", "sw", { input: {} })]), [{ code: "unknown-input-key", ref: "sw", path: ["nodes", 0, "expression"] }]],
  ["a SWITCH listing a case twice", workflow([node("SWITCH", "sw", { cases: ["a", "a"] })]), [{ code: "duplicate-case", ref: "sw", path: ["nodes", 0, "cases", 1] }]],
  ["a SWITCH listing default", workflow([node("SWITCH", "sw", { cases: ["default"] })]), [{ code: "reserved-case", ref: "sw", path: ["nodes", 0, "cases", 0] }]],
  ["a DYNAMIC naming a missing input key", workflow([node("DYNAMIC", "d", { input: {} })]), [{ code: "unknown-input-key", ref: "d", path: ["nodes", 0, "dynamicTaskNameParam"] }]],
  ["a dynamic fork in neither form", workflow([node("FORK_JOIN_DYNAMIC", "f", { forkTaskName: undefined, items: undefined })]), [{ code: "missing-field", ref: "f", path: ["nodes", 0] }]],
  [
    "a dynamic fork in both forms",
    workflow([node("FORK_JOIN_DYNAMIC", "f", { dynamicForkTasksParam: "t", dynamicForkTasksInputParamName: "i", input: { t: [], i: {} } })]),
    [{ code: "conflicting-fields", ref: "f", path: ["nodes", 0] }],
  ],
  [
    "a Conductor-form dynamic fork missing half its config",
    workflow([node("FORK_JOIN_DYNAMIC", "f", { forkTaskName: undefined, items: undefined, dynamicForkTasksParam: "t", input: {} })]),
    [
      { code: "missing-field", ref: "f", path: ["nodes", 0, "dynamicForkTasksInputParamName"] },
      { code: "unknown-input-key", ref: "f", path: ["nodes", 0, "dynamicForkTasksParam"] },
    ],
  ],
  ["a dynamic fork version without sub-workflows", workflow([node("FORK_JOIN_DYNAMIC", "f", { forkTaskVersion: 1 })]), [{ code: "invalid-field", ref: "f", path: ["nodes", 0, "forkTaskVersion"] }]],
  [
    "a DO_WHILE with both a condition and items",
    workflow([node("DO_WHILE", "l", { items: [1, 2] }), simple("b", { parent: "l" })]),
    [{ code: "conflicting-fields", ref: "l", path: ["nodes", 0] }],
  ],
  ["a DO_WHILE with neither", workflow([node("DO_WHILE", "l", { loopCondition: undefined }), simple("b", { parent: "l" })]), [{ code: "missing-field", ref: "l", path: ["nodes", 0] }]],
  ["a DO_WHILE with keepLastN 0", workflow([node("DO_WHILE", "l", { keepLastN: 0 }), simple("b", { parent: "l" })]), [{ code: "invalid-field", ref: "l", path: ["nodes", 0, "keepLastN"] }]],
  ["a WAIT with no form", workflow([node("WAIT", "w", { duration: undefined })]), [{ code: "missing-field", ref: "w", path: ["nodes", 0] }]],
  ["a WAIT with two forms", workflow([node("WAIT", "w", { until: "2030-01-01" })]), [{ code: "conflicting-fields", ref: "w", path: ["nodes", 0] }]],
  ["a WAIT duration that is not one", workflow([node("WAIT", "w", { duration: "soon" })]), [{ code: "invalid-field", ref: "w", path: ["nodes", 0, "duration"] }]],
  ["a WAIT until that is not a time", workflow([node("WAIT", "w", { duration: undefined, until: "tomorrow" })]), [{ code: "invalid-field", ref: "w", path: ["nodes", 0, "until"] }]],
  ["a WAIT signal of false", workflow([node("WAIT", "w", { duration: undefined, signal: false })]), [{ code: "invalid-field", ref: "w", path: ["nodes", 0, "signal"] }]],
  ["a HUMAN listing an outcome twice", workflow([node("HUMAN", "h", { outcomes: ["ok", "ok"] })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "outcomes", 1] }]],
  ["a HUMAN with zero approvals", workflow([node("HUMAN", "h", { approvals: 0 })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "approvals"] }]],
  ["a HUMAN with 1.5 approvals", workflow([node("HUMAN", "h", { approvals: 1.5 })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "approvals"] }]],
  [
    "a HUMAN escalating to an outcome it does not offer",
    workflow([node("HUMAN", "h", { outcomes: ["approve", "reject"], dueIn: "1d", escalation: [{ action: "complete", outcome: "maybe" }] })]),
    [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "escalation", 0, "outcome"] }],
  ],
  [
    "a HUMAN escalating to an outcome without outcomes",
    workflow([node("HUMAN", "h", { outcomes: undefined, dueIn: "1h", escalation: [{ action: "complete", outcome: "approve" }] })]),
    [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "escalation", 0, "outcome"] }],
  ],
  ["a HUMAN form schema that is not an object", workflow([node("HUMAN", "h", { form: { schema: { type: "string" } } })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "form", "schema", "type"] }]],
  [
    "a HUMAN form that is both a template and inline",
    workflow([node("HUMAN", "h", { form: { template: { name: "expense" }, schema: { type: "object" } } })]),
    [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "form"] }],
  ],
  ["a HUMAN assignee of an unknown form", workflow([node("HUMAN", "h", { assignee: "team:finance" })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "assignee"] }]],
  ["a HUMAN escalating without a due time", workflow([node("HUMAN", "h", { escalation: [{ action: "timeout" }] })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "escalation"] }]],
  ["a HUMAN escalation step of an unknown action", workflow([node("HUMAN", "h", { escalation: [{ action: "panic" }] })]), [{ code: "invalid-field", ref: "h", path: ["nodes", 0, "escalation", 0, "action"] }]],
  ["a SUB_WORKFLOW with neither form", workflow([node("SUB_WORKFLOW", "s", { subWorkflowParam: undefined })]), [{ code: "missing-field", ref: "s", path: ["nodes", 0] }]],
  [
    "a SUB_WORKFLOW with both forms",
    workflow([node("SUB_WORKFLOW", "s", { workflowDefinition: workflow([simple("x")]) })]),
    [{ code: "conflicting-fields", ref: "s", path: ["nodes", 0] }],
  ],
  [
    "an inline sub-workflow with problems of its own",
    workflow([node("SUB_WORKFLOW", "s", { subWorkflowParam: undefined, workflowDefinition: workflow([simple("x"), simple("y")], [edge("x", "y"), edge("y", "x")], { name: undefined }) })]),
    [
      { code: "missing-field", ref: "s", path: ["nodes", 0, "workflowDefinition", "name"] },
      { code: "cycle", ref: "s", path: ["nodes", 0, "workflowDefinition", "edges", 1] },
    ],
  ],
  // Refs and edges.
  ["a duplicate ref", workflow([simple("a"), simple("a")]), [{ code: "duplicate-ref", ref: "a", path: ["nodes", 1, "ref"] }]],
  [
    "edges naming unknown nodes",
    workflow([simple("a")], [edge("x", "a"), edge("a", "y"), edge("p", "q")]),
    [
      { code: "unknown-ref", ref: "a", path: ["edges", 0, "source"] },
      { code: "unknown-ref", ref: "a", path: ["edges", 1, "target"] },
      { code: "unknown-ref", path: ["edges", 2, "source"] },
      { code: "unknown-ref", path: ["edges", 2, "target"] },
    ],
  ],
  ["an edge without a target", workflow([simple("a")], [{ source: "a" }]), [{ code: "missing-field", ref: "a", path: ["edges", 0, "target"] }]],
  ["an edge that is not an object", workflow([simple("a")], [null]), [{ code: "invalid-field", path: ["edges", 0] }]],
  ["an unknown edge field", workflow([simple("a"), simple("b")], [{ source: "a", target: "b", sourceHandle: "x" }]), [{ code: "unknown-field", ref: "a", path: ["edges", 0, "sourceHandle"] }]],
  ["a self-loop", workflow([simple("a")], [edge("a", "a")]), [{ code: "self-loop", ref: "a", path: ["edges", 0] }]],
  ["a duplicate edge", workflow([simple("a"), simple("b")], [edge("a", "b"), edge("a", "b")]), [{ code: "duplicate-edge", ref: "a", path: ["edges", 1] }]],
  [
    "a duplicate edge id",
    workflow([simple("a"), simple("b"), simple("c")], [{ id: "e", source: "a", target: "b" }, { id: "e", source: "b", target: "c" }]),
    [{ code: "duplicate-edge-id", path: ["edges", 1, "id"] }],
  ],
  [
    "a cycle reachable from a start node",
    workflow([simple("s"), simple("a"), simple("b"), simple("c")], [edge("s", "a"), edge("a", "b"), edge("b", "c"), edge("c", "a")]),
    [{ code: "cycle", ref: "a", path: ["edges", 3] }],
  ],
  [
    "a cycle no start node enters, and a node behind it",
    workflow([simple("a"), simple("b"), simple("c"), simple("d")], [edge("b", "c"), edge("c", "b"), edge("c", "d")]),
    [
      { code: "cycle", ref: "b", path: ["edges", 1] },
      { code: "unreachable", ref: "d", path: ["nodes", 3] },
    ],
  ],
  // SWITCH edges.
  ["a SWITCH edge without a case", workflow([node("SWITCH", "sw", { cases: ["x"] }), simple("a")], [edge("sw", "a")]), [{ code: "case-missing", ref: "sw", path: ["edges", 0] }]],
  ["a SWITCH edge with an unknown case", workflow([node("SWITCH", "sw", { cases: ["x"] }), simple("a")], [edge("sw", "a", "z")]), [{ code: "unknown-case", ref: "sw", path: ["edges", 0, "case"] }]],
  ["a case on an edge not leaving a SWITCH", workflow([simple("a"), simple("b")], [edge("a", "b", "x")]), [{ code: "unexpected-case", ref: "a", path: ["edges", 0, "case"] }]],
  [
    "duplicate case edges",
    workflow([node("SWITCH", "sw", { cases: ["x"] }), simple("a")], [edge("sw", "a", "x"), edge("sw", "a", "x")]),
    [{ code: "duplicate-edge", ref: "sw", path: ["edges", 1] }],
  ],
  // Containers.
  ["an empty loop body", workflow([node("DO_WHILE", "l")]), [{ code: "empty-loop-body", ref: "l", path: ["nodes", 0] }]],
  ["a parent that does not exist", workflow([simple("a", { parent: "nope" })]), [{ code: "unknown-ref", ref: "a", path: ["nodes", 0, "parent"] }]],
  ["a parent that is not a DO_WHILE", workflow([simple("a"), simple("b", { parent: "a" })]), [{ code: "invalid-parent", ref: "b", path: ["nodes", 1, "parent"] }]],
  ["a node that is its own parent", workflow([simple("a", { parent: "a" })]), [{ code: "invalid-parent", ref: "a", path: ["nodes", 0, "parent"] }]],
  [
    "a DO_WHILE inside another",
    workflow([node("DO_WHILE", "outer"), node("DO_WHILE", "inner", { parent: "outer" }), simple("b", { parent: "inner" })]),
    [{ code: "nested-loop", ref: "inner", path: ["nodes", 1, "parent"] }],
  ],
  [
    "edges crossing into, out of and between loop bodies",
    workflow(
      [simple("a"), node("DO_WHILE", "l1"), simple("b1", { parent: "l1" }), node("DO_WHILE", "l2"), simple("b2", { parent: "l2" })],
      [edge("a", "l1"), edge("l1", "l2"), edge("l1", "b1"), edge("b1", "l1"), edge("a", "b2"), edge("b1", "b2")],
    ),
    [
      { code: "edge-crosses-container", ref: "l1", path: ["edges", 2] },
      { code: "edge-crosses-container", ref: "b1", path: ["edges", 3] },
      { code: "edge-crosses-container", ref: "a", path: ["edges", 4] },
      { code: "edge-crosses-container", ref: "b1", path: ["edges", 5] },
    ],
  ],
  // Joins and nodes that never run.
  [
    "nodes after a TERMINATE",
    workflow([simple("a"), node("TERMINATE", "t"), simple("x"), simple("y")], chain("a", "t", "x", "y")),
    [
      { code: "never-runs", ref: "x", path: ["nodes", 2], severity: "warning" },
      { code: "never-runs", ref: "y", path: ["nodes", 3], severity: "warning" },
    ],
  ],
  [
    "a JOIN on an unknown ref, a downstream ref and a parallel branch",
    workflow(
      [simple("a"), simple("b"), simple("c"), node("JOIN", "j", { joinOn: ["b", "zz", "after", "c"] }), simple("after")],
      [edge("a", "b"), edge("a", "c"), edge("b", "j"), edge("j", "after")],
    ),
    [
      { code: "unknown-ref", ref: "j", path: ["nodes", 3, "joinOn", 1] },
      { code: "join-on-not-upstream", ref: "j", path: ["nodes", 3, "joinOn", 2] },
      { code: "join-on-not-upstream", ref: "j", path: ["nodes", 3, "joinOn", 3] },
    ],
  ],
  [
    "an EXCLUSIVE_JOIN default that comes after it",
    workflow([simple("a"), node("EXCLUSIVE_JOIN", "x", { defaultExclusiveJoinTask: ["b"] }), simple("b")], chain("a", "x", "b")),
    [{ code: "join-on-not-upstream", ref: "x", path: ["nodes", 1, "defaultExclusiveJoinTask", 0] }],
  ],
  // Expressions.
  [
    "expressions reading unknown, downstream, parallel and own refs",
    workflow(
      [
        simple("a", { input: { u: "${ghost.output}", d: "text ${c.output.x} more", self: "${a.output}" } }),
        simple("b", { input: { p: "${c.output}" } }),
        simple("c"),
      ],
      [edge("a", "b"), edge("a", "c")],
    ),
    [
      { code: "expression-unknown-ref", ref: "a", path: ["nodes", 0, "input", "u"], severity: "warning" },
      { code: "expression-not-upstream", ref: "a", path: ["nodes", 0, "input", "d"], severity: "warning" },
      { code: "expression-not-upstream", ref: "a", path: ["nodes", 0, "input", "self"], severity: "warning" },
      { code: "expression-not-upstream", ref: "b", path: ["nodes", 1, "input", "p"], severity: "warning" },
    ],
  ],
  [
    "loop expressions reading across the body boundary the wrong way",
    workflow(
      [
        simple("before", { input: { body: "${s1.output}" } }),
        node("DO_WHILE", "loop"),
        simple("s1", { parent: "loop", input: { later: "${s2.output}" } }),
        simple("s2", { parent: "loop" }),
      ],
      [edge("before", "loop"), edge("s1", "s2")],
    ),
    [
      { code: "expression-not-upstream", ref: "before", path: ["nodes", 0, "input", "body"], severity: "warning" },
      { code: "expression-not-upstream", ref: "s1", path: ["nodes", 2, "input", "later"], severity: "warning" },
    ],
  ],
  [
    "expressions in config fields other than input",
    workflow(
      [
        node("HTTP", "h", { httpRequest: { uri: "https://x/${later.output.id}", headers: { a: ["${nobody.output}"] } } }),
        node("WAIT", "w", { duration: "${later.output.d}" }),
        simple("later", { policy: { cache: { key: "${h.output.k}-${later.output.k}", ttlSeconds: 5 } } }),
      ],
      chain("h", "w", "later"),
    ),
    [
      { code: "expression-unknown-ref", ref: "h", path: ["nodes", 0, "httpRequest", "headers", "a", 0], severity: "warning" },
      { code: "expression-not-upstream", ref: "h", path: ["nodes", 0, "httpRequest", "uri"], severity: "warning" },
      { code: "expression-not-upstream", ref: "w", path: ["nodes", 1, "duration"], severity: "warning" },
      { code: "expression-not-upstream", ref: "later", path: ["nodes", 2, "policy", "cache", "key"], severity: "warning" },
    ],
  ],
  ["an expression whose root is computed", workflow([simple("a", { input: { x: "${${workflow.input.ref}.output}" } })]), [{ code: "invalid-expression", ref: "a", path: ["nodes", 0, "input", "x"] }]],
  [
    "workflow output and variables reading what they cannot",
    workflow([simple("a")], [], { outputParameters: { r: "${ghost.output}" }, variables: { v: "${a.output}" } }),
    [
      { code: "expression-unknown-ref", path: ["outputParameters", "r"], severity: "warning" },
      { code: "expression-not-upstream", path: ["variables", "v"], severity: "warning" },
    ],
  ],
  // Not JSON.
  ["a function", workflow([simple("a", { input: { f: () => 1 } })]), [{ code: "not-json", path: ["nodes", 0, "input", "f"] }]],
  ["NaN", workflow([simple("a", { position: { x: Number.NaN, y: 0 } })]), [{ code: "not-json", path: ["nodes", 0, "position", "x"] }]],
  ["a Date", workflow([simple("a", { input: { when: new Date(0) } })]), [{ code: "not-json", path: ["nodes", 0, "input", "when"] }]],
  ["a __proto__ key", workflow([simple("a", { input: JSON.parse('{"__proto__": {"x": 1}}') as unknown })]), [{ code: "forbidden-key", path: ["nodes", 0, "input", "__proto__"] }]],
  // Secrets and variables.
  [
    "a secret where no task is dispatched",
    workflow([node("SWITCH", "sw", { cases: ["a"], input: { switchCaseValue: "${workflow.secrets.T}" } })], [], { outputParameters: { t: "${workflow.env.E}" } }),
    [
      { code: "secret-not-dispatched", ref: "sw", path: ["nodes", 0, "input", "switchCaseValue"] },
      { code: "secret-not-dispatched", path: ["outputParameters", "t"] },
    ],
  ],
  [
    "a secret in an HTTP task's cache key",
    workflow([node("HTTP", "h", { httpRequest: { uri: "https://x.example" }, policy: { cache: { key: "${workflow.secrets.T}", ttlSeconds: 5 } } })]),
    [{ code: "secret-not-dispatched", ref: "h", path: ["nodes", 0, "policy", "cache", "key"] }],
  ],
  [
    "a secret mixed with an upstream output, and a computed secret name",
    workflow([simple("a"), node("HTTP", "h", { httpRequest: { uri: "https://x.example", headers: { a: "${workflow.secrets.T}:${a.output.x}", b: "${workflow.secrets.${workflow.input.n}}" } } })], chain("a", "h")),
    [
      { code: "invalid-secret-reference", ref: "h", path: ["nodes", 1, "httpRequest", "headers", "a"] },
      { code: "invalid-secret-reference", ref: "h", path: ["nodes", 1, "httpRequest", "headers", "b"] },
    ],
  ],
];

describe("validateDefinition reports", () => {
  it.each(invalid)("%s", (_name, def, expected) => {
    expect(problemsOf(def)).toEqual(expected);
  });

  it("reports every problem at once, in one pass", () => {
    const def = workflow(
      [simple("a"), simple("a"), simple("b", { name: undefined }), node("SWITCH", "sw", { cases: ["x"] }), simple("c", { input: { v: "${d.output}" } }), simple("d")],
      [edge("a", "sw"), edge("sw", "c"), edge("c", "d"), edge("d", "c"), edge("a", "nowhere")],
    );
    const codes = problemsOf(def).map((p) => p.code);
    expect(codes).toEqual(expect.arrayContaining(["duplicate-ref", "missing-field", "case-missing", "cycle", "unknown-ref"]));
  });

  it("returns the input itself when it is valid, without filling in defaults", () => {
    const def = workflow([simple("a")]);
    const result = validateDefinition(def);
    expect(result).toEqual({ ok: true, definition: def, warnings: [] });
    if (result.ok) expect(result.definition).not.toHaveProperty("restartable");
  });

  it("accepts a definition whose only problems are warnings, returning them beside it", () => {
    const def = workflow([simple("a", { input: { v: "${ghost.output}" } }), node("TERMINATE", "t"), simple("x")], chain("a", "t", "x"));
    const result = validateDefinition(def);
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => [w.code, w.ref, w.severity])).toEqual([
      ["never-runs", "x", "warning"],
      ["expression-unknown-ref", "a", "warning"],
    ]);
  });

  it("accepts undefined for an absent optional field, as TypeScript callers write it", () => {
    expect(validateDefinition(workflow([simple("a", { label: undefined })], [], { version: undefined })).ok).toBe(true);
  });
});
