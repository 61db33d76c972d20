import { describe, expect, it } from "vitest";
import { validateDefinition } from "../definition";
import kitchenSink from "./fixtures/kitchen-sink.json";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { importConductorWorkflow } from "./import-workflow";
import { conductorDef, edgeList, forkTask, joinTask, mustImport, nodeOf, simpleTask, switchTask, terminateTask } from "./test-helpers";

describe("importConductorWorkflow: the kitchen sink", () => {
  const result = importConductorWorkflow(kitchenSink);
  if (!result.ok) throw new Error(JSON.stringify(result.problems, null, 2));
  const def = result.definition;

  it("validates, and keeps the workflow-level fields", () => {
    expect(validateDefinition(def).ok).toBe(true);
    expect(def).toMatchObject({
      schemaVersion: 1,
      name: "kitchen_sink",
      version: 3,
      description: expect.stringContaining("Every task type") as unknown,
      timeoutPolicy: "TIME_OUT_WF",
      timeoutSeconds: 3600,
      restartable: true,
      ownerEmail: "owner@example.com",
      variables: { count: 0 },
    });
    // Audit and unknown fields stay out; the outputs reading the absorbed JOIN read the dynamic fork.
    expect(Object.keys(def)).not.toContain("createTime");
    expect(Object.keys(def)).not.toContain("accessPolicy");
    expect(def.outputParameters).toEqual({ hits: "${jq.output.result}", dynamic: "${dynamic_fork.output}", last: "${task_30.output}" });
  });

  it("has one node per task (FORK_JOINs and absorbed JOINs excepted), with types and parents", () => {
    expect(def.nodes.map((n) => [n.ref, n.type, n.parent ?? null])).toEqual([
      ["task_1", "SIMPLE", null],
      ["event_0", "EVENT", null],
      ["task_2", "DYNAMIC", null],
      ["oddEvenDecision", "SWITCH", null],
      ["task_4", "SIMPLE", null],
      ["dynamic_fork", "FORK_JOIN_DYNAMIC", null],
      ["task_10", "SIMPLE", null],
      ["sub_inline", "SUB_WORKFLOW", null],
      ["task_11", "SIMPLE", null],
      ["wf_registered", "SUB_WORKFLOW", null],
      ["fork_join_join", "JOIN", null],
      ["get_es_1", "HTTP", null],
      ["jq", "JSON_JQ_TRANSFORM", null],
      ["lambda", "INLINE", null],
      ["size", "INLINE", null],
      ["route", "SWITCH", null],
      ["notify_small", "SIMPLE", null],
      ["human_review", "HUMAN", null],
      ["wait_signal", "WAIT", null],
      ["stop", "TERMINATE", null],
      ["after_route", "EXCLUSIVE_JOIN", null],
      ["loop", "DO_WHILE", null],
      ["loop_task", "SIMPLE", "loop"],
      ["set_count", "SET_VARIABLE", "loop"],
      ["fan_out", "FORK_JOIN_DYNAMIC", null],
      ["pause", "WAIT", null],
      ["start_other", "START_WORKFLOW", null],
      ["noop", "NOOP", null],
      ["task_30", "SIMPLE", null],
    ]);
  });

  it("turns the nesting into edges: cases labelled, the fork fanned out and joined, the cases rejoining after the DECISION", () => {
    expect(edgeList(def)).toEqual([
      "task_1->event_0",
      "event_0->task_2",
      "task_2->oddEvenDecision",
      "oddEvenDecision[0]->task_4",
      "task_4->dynamic_fork",
      "oddEvenDecision[1]->task_10",
      "task_10->sub_inline",
      "oddEvenDecision[1]->task_11",
      "task_11->wf_registered",
      // Every case's end (and the empty default's handle) leads to the task after the DECISION.
      "dynamic_fork->get_es_1",
      "fork_join_join->get_es_1",
      "oddEvenDecision[default]->get_es_1",
      "get_es_1->jq",
      "jq->lambda",
      "lambda->size",
      "size->route",
      "route[small]->notify_small",
      "route[big]->human_review",
      "human_review->wait_signal",
      // The TERMINATE in the default case ends its path: nothing leaves it.
      "route[default]->stop",
      "notify_small->after_route",
      "wait_signal->after_route",
      "after_route->loop",
      // The loop body is wired inside the container only.
      "loop_task->set_count",
      "loop->fan_out",
      "fan_out->pause",
      "pause->start_other",
      "start_other->noop",
      "noop->task_30",
      // joinOn, wired once every task exists.
      "sub_inline->fork_join_join",
      "wf_registered->fork_join_join",
    ]);
  });

  it("maps each task's configuration onto its node", () => {
    expect(nodeOf(def, "task_1")).toMatchObject({
      name: "task_1",
      description: "first worker task",
      input: { mod: "${workflow.input.mod}", oddEven: "${workflow.input.oddEven}" },
      // Exactly the fields the inline taskDefinition states; nulls and empty templates are absent.
      policy: {
        retryCount: 5,
        timeoutSeconds: 120,
        timeoutPolicy: "RETRY",
        retryLogic: "EXPONENTIAL_BACKOFF",
        retryDelaySeconds: 2,
        responseTimeoutSeconds: 60,
        rateLimitPerFrequency: 10,
        rateLimitFrequencyInSeconds: 5,
        backoffScaleFactor: 1,
      },
    });
    expect(nodeOf(def, "task_1")).not.toHaveProperty("optional");
    expect(nodeOf(def, "task_2")).toMatchObject({ dynamicTaskNameParam: "taskToExecute", policy: { retryCount: 1, startDelay: 5 } });
    expect(nodeOf(def, "event_0")).toMatchObject({ sink: "conductor:kitchen_sink_events" });
    expect(nodeOf(def, "oddEvenDecision")).toMatchObject({ evaluatorType: "value-param", expression: "oddEven", cases: ["0", "1"] });
    expect(nodeOf(def, "dynamic_fork")).toMatchObject({ dynamicForkTasksParam: "dynamicTasks", dynamicForkTasksInputParamName: "dynamicTasksInput" });
    expect(nodeOf(def, "fork_join_join")).toMatchObject({ joinOn: ["sub_inline", "wf_registered"] });
    expect(nodeOf(def, "wf_registered")).toMatchObject({ subWorkflowParam: { name: "sub_flow_1", version: 2 } });
    const inline = nodeOf(def, "sub_inline");
    expect(inline).toMatchObject({ input: { x: "${task_10.output.x}" }, workflowDefinition: { schemaVersion: 1, name: "inline_child", version: 1 } });
    expect(inline.type === "SUB_WORKFLOW" && inline.workflowDefinition?.nodes.map((n) => n.ref)).toEqual(["child_task"]);
    expect(nodeOf(def, "get_es_1")).toMatchObject({
      optional: true,
      httpRequest: { uri: "http://localhost:9200/conductor/_search?size=10", method: "GET", headers: { Accept: "application/json" } },
    });
    expect(nodeOf(def, "get_es_1")).not.toHaveProperty("input");
    expect(nodeOf(def, "jq")).toMatchObject({ queryExpression: "[.hits[]._source]", input: { hits: "${get_es_1.output.response.body.hits.hits}" } });
    expect(nodeOf(def, "lambda")).toMatchObject({
      evaluatorType: "javascript",
      expression: "function scriptFun(){if ($.n > 1) { return {big: true}; } return {big: false};} scriptFun();",
      input: { n: "${workflow.input.mod}" },
    });
    expect(nodeOf(def, "size")).toMatchObject({ evaluatorType: "graaljs", input: { big: "${lambda.output.result.big}" } });
    expect(nodeOf(def, "route")).toMatchObject({ evaluatorType: "value-param", expression: "size", cases: ["small", "big"] });
    expect(nodeOf(def, "wait_signal")).toMatchObject({ signal: true });
    expect(nodeOf(def, "stop")).toMatchObject({ terminationStatus: "FAILED", terminationReason: "unknown size ${size.output.result}", workflowOutput: { size: "${size.output.result}" } });
    expect(nodeOf(def, "after_route")).toMatchObject({ joinOn: ["notify_small", "wait_signal"], defaultExclusiveJoinTask: ["route"] });
    expect(nodeOf(def, "loop")).toMatchObject({ loopCondition: expect.stringContaining("$.loop['iteration']") as unknown, keepLastN: 2, input: { times: "${workflow.input.times}" } });
    expect(nodeOf(def, "fan_out")).toMatchObject({ forkTaskName: "process_item", items: "${workflow.input.items}" });
    expect(nodeOf(def, "fan_out")).not.toHaveProperty("input");
    expect(nodeOf(def, "pause")).toMatchObject({ duration: "10s" });
    expect(nodeOf(def, "start_other")).toMatchObject({ startWorkflow: { name: "other_flow", version: 1, input: { from: "${workflow.workflowId}" } } });
    expect(nodeOf(def, "task_30")).toMatchObject({
      // `${fan_out_join…}` read the JOIN absorbed into the dynamic fork.
      input: { statuses: "${fan_out.output}", joined: "${fork_join_join.output}" },
      policy: { cache: { key: "${workflow.input.mod}", ttlSeconds: 60 } },
    });
  });

  it("says what it dropped or reinterpreted", () => {
    expect(result.warnings.find((w) => w.ref === "task_30")?.message).toContain("{results: [...]}");
    expect(result.warnings.map((w) => [w.code, w.ref ?? null])).toEqual([
      ["legacy-form", "oddEvenDecision"],
      ["field-dropped", "get_es_1"],
      ["legacy-form", "lambda"],
      ["field-dropped", null],
      ["expression-rewritten", null],
      ["expression-rewritten", "task_30"],
    ]);
  });

  it("lays the graph out top to bottom, children relative to their loop", () => {
    const pos = (ref: string) => nodeOf(def, ref).position;
    for (const e of def.edges) expect(pos(e.target).y).toBeGreaterThan(pos(e.source).y);
    // Lanes: the cases of a SWITCH sit side by side under it.
    expect(new Set(["notify_small", "human_review", "stop"].map((r) => pos(r).x)).size).toBe(3);
    expect(pos("loop_task")).toEqual({ x: 32, y: 56 });
    expect(pos("set_count").y).toBeGreaterThan(pos("loop_task").y);
    expect(importConductorWorkflow(kitchenSink)).toEqual(result);
  });
});

describe("importConductorWorkflow: task types", () => {
  const one = (task: ConductorWorkflowTask) =>
    nodeOf(mustImport(conductorDef(task.type === "FORK_JOIN_DYNAMIC" ? [task, joinTask("j", [])] : [task])), task.taskReferenceName);

  it.each<[string, ConductorWorkflowTask, Record<string, unknown>]>([
    ["SIMPLE (type defaults to SIMPLE)", { name: "charge", taskReferenceName: "c", inputParameters: { a: 1 } }, { type: "SIMPLE", name: "charge", input: { a: 1 } }],
    [
      "HTTP with its request flat in inputParameters",
      { name: "h", taskReferenceName: "h", type: "HTTP", inputParameters: { uri: "https://x.test", method: "POST", body: { a: 1 }, extra: true } },
      { type: "HTTP", httpRequest: { uri: "https://x.test", method: "POST", body: { a: 1 } }, input: { extra: true } },
    ],
    [
      "INLINE without evaluatorType (javascript assumed)",
      { name: "i", taskReferenceName: "i", type: "INLINE", inputParameters: { expression: "1 + 1" } },
      { type: "INLINE", evaluatorType: "javascript", expression: "1 + 1" },
    ],
    [
      "LAMBDA with a top-level scriptExpression",
      { name: "l", taskReferenceName: "l", type: "LAMBDA", scriptExpression: "return 1;", inputParameters: { a: 1 } },
      { type: "INLINE", evaluatorType: "javascript", expression: "function scriptFun(){return 1;} scriptFun();", input: { a: 1 } },
    ],
    [
      "DECISION with a caseExpression (javascript SWITCH)",
      { name: "d", taskReferenceName: "d", type: "DECISION", caseExpression: "$.n > 1 ? 'big' : 'small'", inputParameters: { n: 2 }, decisionCases: { big: [] } },
      { type: "SWITCH", evaluatorType: "javascript", expression: "$.n > 1 ? 'big' : 'small'", cases: ["big"] },
    ],
    [
      "SWITCH graaljs",
      { name: "s", taskReferenceName: "s", type: "SWITCH", evaluatorType: "graaljs", expression: "'a'", decisionCases: { a: [], b: [] } },
      { type: "SWITCH", evaluatorType: "graaljs", cases: ["a", "b"] },
    ],
    ["SET_VARIABLE", { name: "v", taskReferenceName: "v", type: "SET_VARIABLE", inputParameters: { x: 1 } }, { type: "SET_VARIABLE", input: { x: 1 } }],
    ["NOOP", { name: "n", taskReferenceName: "n", type: "NOOP" }, { type: "NOOP" }],
    ["WAIT until", { name: "w", taskReferenceName: "w", type: "WAIT", inputParameters: { until: "2030-01-31 09:00 UTC" } }, { type: "WAIT", until: "2030-01-31 09:00 UTC" }],
    [
      "HUMAN with its node-flow configuration",
      { name: "h", taskReferenceName: "h", type: "HUMAN", nodeFlow: { label: "Approve", assignee: "group:ops", outcomes: ["yes", "no"], dueIn: "2d" } },
      { type: "HUMAN", label: "Approve", assignee: "group:ops", outcomes: ["yes", "no"], dueIn: "2d" },
    ],
    [
      "FORK_JOIN_DYNAMIC forking sub-workflows (version as Conductor's string)",
      { name: "f", taskReferenceName: "f", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskWorkflow: "child", forkTaskWorkflowVersion: "3", forkTaskInputs: [{ a: 1 }], keep: 1 } },
      { type: "FORK_JOIN_DYNAMIC", forkTaskName: "child", forkTaskType: "SUB_WORKFLOW", forkTaskVersion: 3, items: [{ a: 1 }], input: { keep: 1 } },
    ],
    [
      "DO_WHILE over items",
      { name: "l", taskReferenceName: "l", type: "DO_WHILE", items: "${workflow.input.list}", loopOver: [simpleTask("body")] },
      { type: "DO_WHILE", items: "${workflow.input.list}" },
    ],
    [
      "TERMINATE keeps extra input",
      { name: "t", taskReferenceName: "t", type: "TERMINATE", inputParameters: { terminationStatus: "TERMINATED", note: "x" } },
      { type: "TERMINATE", terminationStatus: "TERMINATED", input: { note: "x" } },
    ],
  ])("%s", (_, task, expected) => {
    const node = one(task);
    expect(node).toMatchObject(expected);
    if (task.type === "FORK_JOIN_DYNAMIC") return;
    expect(node).not.toHaveProperty("parent");
  });

  it("keeps FORK_JOIN_DYNAMIC's JOIN out of the graph, and joinOn naming it waits for the fork", () => {
    const def = mustImport(
      conductorDef([
        forkTask("fork", [
          [{ name: "d", taskReferenceName: "dyn", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskName: "w", forkTaskInputs: [] } }, joinTask("dyn_join", [])],
          [simpleTask("b")],
        ]),
        joinTask("j", ["dyn_join", "b"]),
        simpleTask("after", { inputParameters: { all: "${j.output.dyn_join}", direct: "${dyn_join.output}" } }),
      ]),
    );
    expect(def.nodes.map((n) => n.ref)).toEqual(["dyn", "b", "j", "after"]);
    expect(edgeList(def)).toEqual(["j->after", "dyn->j", "b->j"]);
    expect(nodeOf(def, "j")).toMatchObject({ joinOn: ["dyn", "b"] });
    // Only roots are renamed: `${j.output.dyn_join}` reads a key of j's output.
    expect(nodeOf(def, "after").input).toEqual({ all: "${j.output.dyn_join}", direct: "${dyn.output}" });
  });
});

describe("importConductorWorkflow: joinOn keeps Conductor's meaning", () => {
  const a = simpleTask("a");
  const b1 = simpleTask("b1");
  const b2 = simpleTask("b2");

  it("a branch joinOn leaves out is not waited for: it keeps no outgoing edge and runs on in parallel", () => {
    const def = mustImport(conductorDef([simpleTask("s"), forkTask("f", [[a], [b1, b2]]), joinTask("j", ["a"]), simpleTask("after")]));
    expect(edgeList(def)).toEqual(["s->a", "s->b1", "b1->b2", "j->after", "a->j"]);
  });

  it("a task named mid-branch gets an edge to the JOIN, and its branch carries on", () => {
    const def = mustImport(conductorDef([forkTask("f", [[a], [b1, b2]]), joinTask("j", ["a", "b1"])]));
    expect(edgeList(def)).toEqual(["b1->b2", "a->j", "b1->j"]);
  });

  it("tasks of one branch named together wait only for the last of them", () => {
    const def = mustImport(conductorDef([forkTask("f", [[a], [b1, b2]]), joinTask("j", ["a", "b1", "b2"])]));
    expect(edgeList(def)).toEqual(["b1->b2", "a->j", "b2->j"]);
    expect(nodeOf(def, "j")).toMatchObject({ joinOn: ["a", "b1", "b2"] });
  });

  it("a SWITCH means the end of whichever case ran: every case's end leads to the JOIN, an empty case from its handle", () => {
    const def = mustImport(
      conductorDef([forkTask("f", [[switchTask("sw", { x: [simpleTask("x1")], y: [] }, [simpleTask("d1"), terminateTask("end")])], [a]]), joinTask("j", ["sw", "a"])]),
    );
    expect(edgeList(def)).toEqual(["sw[x]->x1", "sw[default]->d1", "d1->end", "x1->j", "sw[y]->j", "a->j"]);
  });

  it("a DO_WHILE means the whole loop; a task of its body, the loop (with a warning)", () => {
    const result = importConductorWorkflow(
      conductorDef([
        forkTask("f", [[{ name: "l", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", loopOver: [simpleTask("body")] }], [a]]),
        joinTask("j", ["body", "a"]),
      ]),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(edgeList(result.definition)).toEqual(["loop->j", "a->j"]);
    expect(nodeOf(result.definition, "j")).toMatchObject({ joinOn: ["loop", "a"] });
    expect(result.warnings).toEqual([expect.objectContaining({ code: "join-on-adjusted", ref: "j", path: ["tasks", 1, "joinOn", 0] })]);
  });

  it("a TERMINATE is dropped from joinOn: there is nothing to wait for", () => {
    const result = importConductorWorkflow(conductorDef([forkTask("f", [[simpleTask("x"), terminateTask("end")], [a]]), joinTask("j", ["end", "a"])]));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(edgeList(result.definition)).toEqual(["x->end", "a->j"]);
    expect(nodeOf(result.definition, "j")).toMatchObject({ joinOn: ["a"] });
    expect(result.warnings.map((w) => w.code)).toEqual(["join-on-adjusted"]);
  });

  it("an empty joinOn completes at once in Conductor: the JOIN is reached right from the fork point", () => {
    const def = mustImport(conductorDef([simpleTask("s"), forkTask("f", [[a], [b1]]), joinTask("j", []), simpleTask("after")]));
    expect(edgeList(def)).toEqual(["s->a", "s->b1", "j->after", "s->j"]);
  });

  it("a task outside the fork: no edge when it has finished anyway, an edge when it runs in parallel", () => {
    const upstream = mustImport(conductorDef([simpleTask("s"), forkTask("f", [[a], [b1]]), joinTask("j", ["a", "b1", "s"])]));
    expect(edgeList(upstream)).toEqual(["s->a", "s->b1", "a->j", "b1->j"]);
    const parallel = mustImport(conductorDef([forkTask("outer", [[forkTask("inner", [[a], [b1]]), joinTask("ji", ["a", "b1", "c"])], [simpleTask("c")]]), joinTask("jo", ["ji", "c"])]));
    expect(edgeList(parallel)).toEqual(["a->ji", "b1->ji", "ji->jo", "c->jo", "c->ji"]);
  });

  it("refuses what Conductor would wait on forever or never", () => {
    const result = importConductorWorkflow(conductorDef([forkTask("f", [[a], [b1]]), joinTask("j", ["a", "nowhere", "f"])]));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => [p.code, p.ref, p.path])).toEqual([
      ["invalid-join-on", "j", ["tasks", 1, "joinOn", 1]],
      ["invalid-join-on", "j", ["tasks", 1, "joinOn", 2]],
    ]);
    expect(result.problems[0]!.message).toContain('"nowhere"');
    expect(result.problems[1]!.message).toContain("completes as soon as it forks");
  });
});

describe("importConductorWorkflow: sequences and branches", () => {
  it("a FORK_JOIN first in the workflow gives several start nodes", () => {
    const def = mustImport(conductorDef([forkTask("f", [[simpleTask("a")], [simpleTask("b")]]), joinTask("j", ["a", "b"])]));
    expect(edgeList(def)).toEqual(["a->j", "b->j"]);
  });

  it("empty cases lead from their handle straight to the task after the SWITCH; a SWITCH at the end leaves its handles open", () => {
    const def = mustImport(conductorDef([switchTask("sw", { x: [simpleTask("x1")], y: [] }), simpleTask("after"), switchTask("last", { z: [simpleTask("z1")] })]));
    expect(edgeList(def)).toEqual(["sw[x]->x1", "x1->after", "sw[y]->after", "sw[default]->after", "after->last", "last[z]->z1"]);
  });

  it("a DO_WHILE body starts with its own start nodes and never connects outside", () => {
    const def = mustImport(
      conductorDef([
        simpleTask("before"),
        { name: "l", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", loopOver: [forkTask("f", [[simpleTask("a")], [simpleTask("b")]]), joinTask("j", ["a", "b"])] },
        simpleTask("after"),
      ]),
    );
    expect(def.nodes.map((n) => [n.ref, n.parent ?? null])).toEqual([
      ["before", null],
      ["loop", null],
      ["a", "loop"],
      ["b", "loop"],
      ["j", "loop"],
      ["after", null],
    ]);
    expect(edgeList(def)).toEqual(["before->loop", "loop->after", "a->j", "b->j"]);
  });
});

describe("importConductorWorkflow: refusals name the task", () => {
  const problems = (def: unknown) => {
    const result = importConductorWorkflow(def);
    expect(result.ok).toBe(false);
    return result.ok ? [] : result.problems.map((p) => ({ code: p.code, ref: p.ref, path: p.path }));
  };

  it.each<[string, ConductorWorkflowTask]>([
    ["KAFKA_PUBLISH", { name: "k", taskReferenceName: "kafka", type: "KAFKA_PUBLISH", inputParameters: { kafka_request: {} } }],
    ["BUSINESS_RULE", { name: "b", taskReferenceName: "rules", type: "BUSINESS_RULE" }],
    ["a custom (USER_DEFINED) type", { name: "x", taskReferenceName: "custom", type: "MY_SYSTEM_TASK" }],
  ])("an unsupported task type: %s", (_, task) => {
    const nested = conductorDef([switchTask("sw", { a: [simpleTask("ok"), task] })]);
    expect(problems(nested)).toEqual([{ code: "unsupported-task-type", ref: task.taskReferenceName, path: ["tasks", 0, "decisionCases", "a", 1, "type"] }]);
    const result = importConductorWorkflow(nested);
    expect(!result.ok && result.problems[0]!.message).toContain(String(task.type));
  });

  it.each<[string, ConductorWorkflowTask, string]>([
    ["a python INLINE", { name: "i", taskReferenceName: "i", type: "INLINE", inputParameters: { evaluatorType: "python", expression: "1" } }, "unsupported-feature"],
    ["a sub-workflow defined by an expression", { name: "s", taskReferenceName: "s", type: "SUB_WORKFLOW", subWorkflowParam: { name: "x", workflowDefinition: "${workflow.input.def}" } }, "unsupported-feature"],
    ["a case named default", { name: "s", taskReferenceName: "s", type: "SWITCH", evaluatorType: "value-param", expression: "k", inputParameters: { k: 1 }, decisionCases: { default: [] } }, "unsupported-feature"],
    ["a DECISION with neither caseValueParam nor caseExpression", { name: "d", taskReferenceName: "d", type: "DECISION", decisionCases: {} }, "missing-config"],
    ["a TERMINATE without a status", { name: "t", taskReferenceName: "t", type: "TERMINATE" }, "missing-config"],
    ["a SIMPLE without a name", { taskReferenceName: "t", type: "SIMPLE" }, "missing-config"],
  ])("%s", (_, task, code) => {
    const list = problems(conductorDef([task]));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ code, ref: task.taskReferenceName });
  });

  it("the legacy dynamic fork form", () => {
    expect(problems(conductorDef([{ name: "f", taskReferenceName: "f", type: "FORK_JOIN_DYNAMIC", dynamicForkJoinTasksParam: "tasks" }, joinTask("j", [])]))).toEqual([
      { code: "unsupported-feature", ref: "f", path: ["tasks", 0, "dynamicForkJoinTasksParam"] },
    ]);
  });

  it("a FORK_JOIN (or dynamic fork) not followed by a JOIN", () => {
    expect(problems(conductorDef([forkTask("f", [[simpleTask("a")], [simpleTask("b")]]), simpleTask("c")]))).toEqual([{ code: "missing-join", ref: "f", path: ["tasks", 0] }]);
    expect(problems(conductorDef([{ name: "d", taskReferenceName: "d", type: "FORK_JOIN_DYNAMIC", inputParameters: { forkTaskName: "w", forkTaskInputs: [] } }]))).toEqual([
      { code: "missing-join", ref: "d", path: ["tasks", 0] },
    ]);
  });

  it("accepts a task Conductor would never schedule — after a TERMINATE, or after a SWITCH all of whose paths terminate — and warns of it", () => {
    const brief = (ws: { code: string; ref?: string; path: (string | number)[] }[]) => ws.map((w) => ({ code: w.code, ref: w.ref, path: w.path }));
    const after = importConductorWorkflow(conductorDef([simpleTask("a"), terminateTask("end"), simpleTask("late")]));
    expect(after.ok).toBe(true);
    if (after.ok) expect(edgeList(after.definition)).toEqual(["a->end", "end->late"]);
    expect(brief(after.warnings)).toEqual([{ code: "never-runs", ref: "late", path: ["tasks", 2] }]);
    const cases = importConductorWorkflow(conductorDef([switchTask("sw", { x: [terminateTask("e1")] }, [terminateTask("e2")]), simpleTask("late")]));
    expect(cases.ok).toBe(true);
    if (cases.ok) expect(edgeList(cases.definition)).toEqual(expect.arrayContaining(["e1->late", "e2->late"]));
    expect(brief(cases.warnings)).toContainEqual({ code: "never-runs", ref: "late", path: ["tasks", 1] });
  });

  it("duplicate taskReferenceNames, including a FORK_JOIN's", () => {
    expect(problems(conductorDef([simpleTask("a"), forkTask("a", [[simpleTask("b")]]), joinTask("j", ["b"])]))).toEqual([{ code: "duplicate-ref", ref: "a", path: ["tasks", 1] }]);
  });

  it("shape errors point into the Conductor JSON", () => {
    expect(problems({ name: "x", tasks: [simpleTask("a"), { name: "b", taskReferenceName: "b", inputParameters: [], optional: "yes" }] })).toEqual([
      { code: "invalid-workflow-def", ref: "b", path: ["tasks", 1, "inputParameters"] },
      { code: "invalid-workflow-def", ref: "b", path: ["tasks", 1, "optional"] },
    ]);
    expect(problems({ tasks: "none" })).toEqual([
      { code: "invalid-workflow-def", ref: undefined, path: ["name"] },
      { code: "invalid-workflow-def", ref: undefined, path: ["tasks"] },
    ]);
    expect(problems([1, 2])).toEqual([{ code: "invalid-workflow-def", ref: undefined, path: [] }]);
  });

  it("what the imported graph's validation finds points back at the task", () => {
    const list = problems(conductorDef([simpleTask("a", { inputParameters: { x: "${ghost.output.x}" } }), { name: "l", taskReferenceName: "loop", type: "DO_WHILE", loopCondition: "false", loopOver: [] }]));
    expect(list).toEqual([{ code: "empty-loop-body", ref: "loop", path: ["tasks", 1] }]);
    // Conductor resolves a ref that does not exist to null: a warning, pointing at the task too.
    const warned = importConductorWorkflow(conductorDef([simpleTask("a", { inputParameters: { x: "${ghost.output.x}" } })]));
    expect(warned.ok).toBe(true);
    expect(warned.warnings.map((w) => [w.code, w.ref, w.path])).toEqual([["expression-unknown-ref", "a", ["tasks", 0, "inputParameters", "x"]]]);
  });

  it("an inline sub-workflow whose expressions name refs it lacks imports, warning once per expression", () => {
    const inline = { name: "child", tasks: [simpleTask("k", { inputParameters: { p: "${parent_task.output.x}" } })], outputParameters: { g: "${ghost.output}" } };
    const imported = importConductorWorkflow(conductorDef([simpleTask("parent_task"), { name: "s", taskReferenceName: "s", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child", workflowDefinition: inline } }]));
    expect(imported.ok).toBe(true);
    // Each points at the SUB_WORKFLOW task, its message saying where inside the inline workflow.
    expect(imported.warnings.map((w) => [w.code, w.ref, w.path, w.message.startsWith("In the inline workflow")])).toEqual([
      ["expression-unknown-ref", "s", ["tasks", 1], true],
      ["expression-unknown-ref", "s", ["tasks", 1], true],
    ]);
  });

  it("an inline sub-workflow's problems come back inside it", () => {
    const inline = { name: "child", tasks: [{ name: "k", taskReferenceName: "k", type: "KAFKA_PUBLISH" }] };
    expect(problems(conductorDef([{ name: "s", taskReferenceName: "s", type: "SUB_WORKFLOW", subWorkflowParam: { name: "child", workflowDefinition: inline } }]))).toEqual([
      { code: "unsupported-task-type", ref: "k", path: ["tasks", 0, "subWorkflowParam", "workflowDefinition", "tasks", 0, "type"] },
    ]);
  });
});

describe("importConductorWorkflow: Conductor clients' extras and hostile input", () => {
  it("accepts nulls and unknown fields, and keeps unknown fields out of the graph", () => {
    const def = mustImport(
      conductorDef([simpleTask("a", { inputParameters: null, taskDefinition: null, decisionCases: null, joinOn: null, ...({ weird: { deep: 1 }, createdBy: "x" } as object) })], {
        ownerApp: "app",
        futureField: [1, 2],
        outputParameters: null,
      }),
    );
    expect(def.nodes).toEqual([{ ref: "a", type: "SIMPLE", name: "a", position: { x: 0, y: 0 } }]);
    expect(Object.keys(def).sort()).toEqual(["edges", "name", "nodes", "schemaVersion", "version"]);
  });

  it("warns about fields it drops that change behaviour", () => {
    const result = importConductorWorkflow(
      conductorDef([simpleTask("a", { asyncComplete: true, taskDefinition: { name: "a", isolationGroupId: "g" } })], { failureWorkflowVersion: 2, workflowStatusListenerEnabled: true, inputTemplate: { x: 1 } }),
    );
    expect(result.warnings.map((w) => [w.code, w.path])).toEqual([
      ["field-dropped", ["tasks", 0]],
      ["field-dropped", ["tasks", 0, "asyncComplete"]],
      ["field-dropped", ["failureWorkflowVersion"]],
      ["field-dropped", ["inputTemplate"]],
      ["field-dropped", ["workflowStatusListenerEnabled"]],
    ]);
  });

  it("a 5,000-branch fork whose joinOn names every task imports in linear time", () => {
    const branches = Array.from({ length: 5_000 }, (_, i) => [simpleTask(`a${i}`), simpleTask(`b${i}`)]);
    const def = mustImport(conductorDef([forkTask("f", branches), joinTask("j", branches.flat().map((t) => t.taskReferenceName))]));
    expect(def.edges.filter((e) => e.target === "j")).toHaveLength(5_000);
  }, 20_000);

  it("returns structured problems quickly for deep, huge and cyclic input, and never throws", () => {
    let deep: ConductorWorkflowTask = simpleTask("leaf");
    for (let i = 0; i < 5_000; i++) deep = switchTask(`s${i}`, { a: [deep] });
    const cyclic: Record<string, unknown> = { name: "c", tasks: [] };
    (cyclic.tasks as unknown[]).push(cyclic);
    const huge = conductorDef(Array.from({ length: 60_000 }, (_, i) => simpleTask(`t${i}`)));
    // The engine has no clock: "quickly" is this test's timeout (all six take about 2 s).
    const verdicts = [conductorDef([deep]), cyclic, huge, null, "x", { name: "x", tasks: [simpleTask("a", { inputParameters: { s: "x".repeat(300_000) } })] }].map((input) => {
      const result = importConductorWorkflow(input);
      return result.ok ? [] : [...new Set(result.problems.map((p) => p.code))];
    });
    expect(verdicts).toEqual([["too-deep"], ["too-deep"], ["too-many-nodes"], ["invalid-workflow-def"], ["invalid-workflow-def"], ["string-too-long"]]);
  }, 20_000);
});
