import { describe, expect, it } from "vitest";
import { Harness } from "../decide/test-harness";
import type { ConductorWorkflowTask } from "./conductor-schema";
import { exportConductorWorkflow } from "./export-workflow";
import { importConductorWorkflow } from "./import-workflow";
import { conductorDef, mustImport, nodeOf } from "./test-helpers";

/** HTTP_POLL, JDBC, USER_TASK and the types refused by name, through import, export and the decider. */

const httpPoll: ConductorWorkflowTask = {
  name: "await_job",
  taskReferenceName: "await_job",
  type: "HTTP_POLL",
  inputParameters: {
    jobId: "${workflow.input.jobId}",
    http_request: {
      uri: "https://jobs.example.com/jobs/${workflow.input.jobId}",
      method: "GET",
      terminationCondition: "(function(){ return $.output.response.body.state === 'DONE'; })();",
      pollingInterval: "30",
      pollingStrategy: "LINEAR_BACKOFF",
    },
  },
};

const jdbcSelect: ConductorWorkflowTask = {
  name: "query_users",
  taskReferenceName: "query_users",
  type: "JDBC",
  inputParameters: { connectionId: "users-db", type: "SELECT", statement: "SELECT * FROM users WHERE id = ?", parameters: ["${workflow.input.userId}"] },
};

describe("HTTP_POLL", () => {
  it("imports http_request whole, numbers written as digits read as numbers, and exports it back", () => {
    const def = mustImport(conductorDef([httpPoll]));
    const node = nodeOf(def, "await_job");
    expect(node).toMatchObject({
      type: "HTTP_POLL",
      input: { jobId: "${workflow.input.jobId}" },
      httpRequest: { uri: "https://jobs.example.com/jobs/${workflow.input.jobId}", pollingInterval: 30, pollingStrategy: "LINEAR_BACKOFF" },
    });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]).toMatchObject({ type: "HTTP_POLL", inputParameters: { ...httpPoll.inputParameters, http_request: { ...(httpPoll.inputParameters!.http_request as object), pollingInterval: 30 } } });
  });

  it("needs a terminationCondition", () => {
    const result = importConductorWorkflow(conductorDef([{ ...httpPoll, inputParameters: { http_request: { uri: "https://x.example" } } }]));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.message)).toContain('The HTTP_POLL "await_job" needs http_request.terminationCondition');
  });

  it("is queued for the system runner with the resolved request in http_request", () => {
    const h = new Harness(mustImport(conductorDef([httpPoll])), { input: { jobId: "j-7" } });
    const scheduled = h.evaluate().commands.find((c) => c.kind === "scheduleTask");
    expect(scheduled).toMatchObject({
      taskType: "HTTP_POLL",
      executor: "system",
      queueName: "HTTP_POLL",
      input: { jobId: "j-7", http_request: { uri: "https://jobs.example.com/jobs/j-7", pollingInterval: 30, terminationCondition: expect.stringContaining("$.output.response") as unknown } },
    });
  });
});

describe("JDBC", () => {
  it("imports Conductor's inputParameters into the node's statement and exports them back unchanged", () => {
    const def = mustImport(conductorDef([jdbcSelect]));
    expect(nodeOf(def, "query_users")).toMatchObject({ type: "JDBC", jdbc: jdbcSelect.inputParameters });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]).toMatchObject({ type: "JDBC", inputParameters: jdbcSelect.inputParameters });
  });

  it("takes integrationName for the connection, and needs a statement", () => {
    expect(nodeOf(mustImport(conductorDef([{ ...jdbcSelect, inputParameters: { integrationName: "pg", type: "UPDATE", statement: "DELETE FROM t", expectedUpdateCount: 1 } }])), "query_users")).toMatchObject({
      jdbc: { integrationName: "pg", type: "UPDATE", expectedUpdateCount: 1 },
    });
    const result = importConductorWorkflow(conductorDef([{ ...jdbcSelect, inputParameters: { connectionId: "pg" } }]));
    expect(result.ok).toBe(false);
  });

  it("is queued for the system runner with the statement's fields in its input, parameters resolved", () => {
    const h = new Harness(mustImport(conductorDef([jdbcSelect])), { input: { userId: 42 } });
    const scheduled = h.evaluate().commands.find((c) => c.kind === "scheduleTask");
    expect(scheduled).toMatchObject({ taskType: "JDBC", executor: "system", input: { connectionId: "users-db", type: "SELECT", statement: "SELECT * FROM users WHERE id = ?", parameters: [42] } });
  });
});

describe("USER_TASK and the refused types", () => {
  it("imports USER_TASK as a HUMAN task, with a warning saying so", () => {
    const result = importConductorWorkflow(conductorDef([{ name: "user_task", taskReferenceName: "approve", type: "USER_TASK", inputParameters: { largeInput: "${workflow.input.big}" }, asyncComplete: true }]));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(nodeOf(result.definition, "approve")).toMatchObject({ type: "HUMAN", input: { largeInput: "${workflow.input.big}" } });
    expect(result.warnings.map((w) => w.message)).toContain("USER_TASK imported as HUMAN: it waits in the inbox (or for a TaskResult) and its output is what completes it");
  });

  it.each([
    ["KAFKA_PUBLISH", /no Kafka broker configured/],
    ["BLOCKING_SYSTEM_TASK", /stub of Conductor's own test harness/],
    ["CONTROLLABLE_SYS_TASK", /stub of Conductor's own test harness/],
  ])("refuses %s by name, saying why", (type, why) => {
    const result = importConductorWorkflow(conductorDef([{ name: "t", taskReferenceName: "t", type, inputParameters: { kafka_request: { topic: "x" } } }]));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      const problem = result.problems.find((p) => p.code === "unsupported-task-type");
      expect(problem?.message).toMatch(new RegExp(`^"t" is a ${type} task, which node-flow refuses: `));
      expect(problem?.message).toMatch(why);
    }
  });
});

describe("SUB_WORKFLOW and START_WORKFLOW naming their workflow by expression", () => {
  const sub: ConductorWorkflowTask = {
    name: "child",
    taskReferenceName: "child",
    type: "SUB_WORKFLOW",
    subWorkflowParam: { name: "${workflow.input.flow}", version: "${workflow.input.flowVersion}" },
    inputParameters: { amount: 1 },
  };
  const start: ConductorWorkflowTask = {
    name: "kick",
    taskReferenceName: "kick",
    type: "START_WORKFLOW",
    inputParameters: { startWorkflow: { name: "${workflow.input.flow}", version: "${workflow.input.flowVersion}", input: { a: 1 } } },
  };

  it("import both, keep the expressions, and export them back", () => {
    const def = mustImport(conductorDef([sub, start]));
    expect(nodeOf(def, "child")).toMatchObject({ subWorkflowParam: { name: "${workflow.input.flow}", version: "${workflow.input.flowVersion}" } });
    const exported = exportConductorWorkflow(def);
    if (!exported.ok) throw new Error(JSON.stringify(exported.problems));
    expect(exported.workflowDef.tasks[0]!.subWorkflowParam).toEqual(sub.subWorkflowParam);
    expect(exported.workflowDef.tasks[1]!.inputParameters).toEqual(start.inputParameters);
  });

  it("resolve the name and version when scheduled, a version given as digits included", () => {
    const input = { flow: "payments", flowVersion: "3" };
    const child = new Harness(mustImport(conductorDef([sub])), { input }).evaluate().commands;
    expect(child.find((c) => c.kind === "startSubWorkflow")).toMatchObject({ name: "payments", version: 3, input: { amount: 1 } });
    const started = new Harness(mustImport(conductorDef([start])), { input }).evaluate().commands;
    expect(started.find((c) => c.kind === "startWorkflow")).toMatchObject({ name: "payments", version: 3, input: { a: 1 } });
  });

  it("fail the task when the version does not resolve to a whole number", () => {
    const h = new Harness(mustImport(conductorDef([sub])), { input: { flow: "payments", flowVersion: "latest" } });
    h.evaluate();
    expect(h.task("child")).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: 'SUB_WORKFLOW: version "latest" is not a whole number from 1' });
  });
});
