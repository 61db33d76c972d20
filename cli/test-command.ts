import { readFile } from "node:fs/promises";
import { SimulationSetupError, simulate } from "../engine/testkit";
import type { SimulatedTask, Workers } from "../engine/testkit";
import type { WorkflowDefinition } from "../engine/definition";
import type { JqTransform } from "../server/sandbox/jq-transform";
import { createJqTransform } from "../server/sandbox/jq-transform";
import { createQuickJsScriptEvaluator } from "../server/sandbox/quickjs-script-evaluator";
import { runJqTask } from "../server/system-tasks/jq-task";
import { definitionOf } from "./definitions-command";
import { UsageError } from "./help";
import { CliFailure, EXIT, PROCESS_OUTPUT, printJson } from "./remote";
import type { Output } from "./remote";
import { CasesFileSchema, checkCase, formatMismatch, mockOutcome } from "./workflow-cases";
import type { CaseMismatch } from "./workflow-cases";
import { parseArgs } from "node:util";

export const TEST_HELP = `nf test <workflow file> [--cases FILE] [--json]

Runs a workflow definition (node-flow or Conductor JSON) in the engine's
testkit — the real decider, in memory, on a virtual clock, no server — once
per case of a cases file, with the tasks' results mocked, and checks each
case's expectations: the run's status, output, path (the nodes that ran, in
order), skipped nodes, and per-node status, output and attempts. INLINE,
SWITCH and DO_WHILE scripts run in the QuickJS sandbox and JSON_JQ_TRANSFORM
in jq, as on the server; every other dispatched task (SIMPLE, HTTP…) needs a
mock, or its attempt fails with "no mock". The cases file defaults to the
workflow file with .cases.json for .json; docs/cli.md describes its format
and examples/order-approval.cases.json is one.

Prints a line per case and, for a failing one, what differs (- expected,
+ actual). Exit codes: 0 every case passed, 1 some case failed, 2 usage or a
file that cannot be read or run.
`;

/** Node names and types that dispatch to a worker, in a definition: the keys `simulate` looks workers up by. */
function dispatchKeys(definition: WorkflowDefinition): string[] {
  const keys = new Set<string>();
  for (const node of definition.nodes as readonly { type: string; name?: string }[]) {
    if (node.type === "INLINE" || node.type === "EVENT") continue;
    keys.add(node.type);
    if (typeof node.name === "string") keys.add(node.name);
  }
  return [...keys];
}

interface CaseReport {
  name: string;
  ok: boolean;
  status: string;
  mismatches: CaseMismatch[];
}

export async function runTest(argv: string[], output: Output = PROCESS_OUTPUT): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { cases: { type: "string" }, json: { type: "boolean", default: false }, help: { type: "boolean", short: "h", default: false } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    output.out(TEST_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError("test needs one workflow file: nf test workflows/order.json [--cases order.cases.json]");
  const workflowFile = positionals[0]!;
  const casesFile = values.cases ?? (workflowFile.endsWith(".json") ? `${workflowFile.slice(0, -".json".length)}.cases.json` : `${workflowFile}.cases.json`);
  const read = async (file: string) => {
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      throw new CliFailure(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, EXIT.usage);
    }
  };
  const loaded = definitionOf(await read(workflowFile), "auto");
  if (!loaded.ok) throw new CliFailure(`${workflowFile} is not a valid workflow:\n  ${loaded.problems.join("\n  ")}`, EXIT.usage);
  const definition = loaded.definition;
  let casesJson: unknown;
  try {
    casesJson = JSON.parse(await read(casesFile));
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(`${casesFile} is not JSON: ${(error as Error).message}`, EXIT.usage);
  }
  const cases = CasesFileSchema.safeParse(casesJson);
  if (!cases.success) {
    throw new CliFailure(`${casesFile} is not a cases file:\n  ${cases.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(root)"}: ${i.message}`).join("\n  ")}`, EXIT.usage);
  }
  if (cases.data.workflow !== undefined && cases.data.workflow !== definition.name) {
    throw new CliFailure(`${casesFile} is for workflow "${cases.data.workflow}", but ${workflowFile} defines "${definition.name}"`, EXIT.usage);
  }

  const scripts = await createQuickJsScriptEvaluator();
  let jq: JqTransform | undefined;
  const reports: CaseReport[] = [];
  try {
    for (const c of cases.data.cases) {
      const workers: Record<string, (task: SimulatedTask) => unknown> = {};
      const handler = async (task: SimulatedTask) => {
        const mock = c.tasks[task.ref] ?? c.tasks[task.taskDefName] ?? c.tasks[task.taskType];
        if (mock !== undefined) return mockOutcome(mock, task.attempt);
        if (task.taskType === "JSON_JQ_TRANSFORM") {
          jq ??= await createJqTransform();
          const outcome = await runJqTask(task.input, jq);
          return outcome.status === "COMPLETED" ? { status: "COMPLETED", output: outcome.output } : { status: outcome.status, output: outcome.output, reason: outcome.reason ?? "jq failed" };
        }
        return { status: "FAILED_WITH_TERMINAL_ERROR", reason: `nf test: no mock for node "${task.ref}" (${task.taskType}${task.taskDefName === task.taskType ? "" : ` ${task.taskDefName}`}): add "tasks": { "${task.ref}": { "output": { … } } } to case "${c.name}"` };
      };
      for (const key of dispatchKeys(definition)) workers[key] = handler;
      const signals = Object.fromEntries(Object.entries(c.signals).map(([ref, mock]) => [ref, (task: SimulatedTask) => mockOutcome(mock, task.attempt)]));
      let result;
      try {
        result = await simulate(definition, c.input, workers as Workers, { scripts, signals, humans: signals });
      } catch (error) {
        if (error instanceof SimulationSetupError) throw new CliFailure(`case "${c.name}": the workflow cannot run in the testkit: ${error.message}`, EXIT.usage);
        throw error;
      }
      const mismatches = checkCase(c, result);
      const report = { name: c.name, ok: mismatches.length === 0, status: result.status, mismatches };
      reports.push(report);
      if (!values.json) {
        output.out(`${report.ok ? "✓" : "✗"} ${c.name} (${result.status}, ${result.evaluations} evaluations)\n`);
        for (const m of mismatches) output.out(formatMismatch(m));
      }
    }
  } finally {
    await scripts.close();
    await jq?.close();
  }
  const failed = reports.filter((r) => !r.ok).length;
  if (values.json) printJson(output, { workflow: definition.name, passed: reports.length - failed, failed, cases: reports });
  else output.out(`${reports.length - failed} passed, ${failed} failed (${workflowFile}, ${casesFile})\n`);
  return failed > 0 ? EXIT.failed : EXIT.ok;
}
