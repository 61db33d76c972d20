import { WORKFLOW_STATUSES, isTerminalWorkflowStatus } from "../engine/statuses";
import type { WorkflowStatus } from "../engine/statuses";
import type { NodeFlowClient, Run, RunSummary, RunTask } from "../sdk";
import { followRun } from "./follow-run";
import { UsageError } from "./help";
import { describeEndedRun, exitCodeOf } from "./run-command";
import { EXIT, PROCESS_OUTPUT, clientFor, formatTable, intFlag, parseRemoteArgs, printJson, readJsonObjectArg } from "./remote";
import type { Env, Output, Remote } from "./remote";

export const RUNS_HELP = `nf runs <list|get|retry|rerun|restart|terminate> … [--json] [--url URL] [--namespace NS] [--api-key KEY]

  nf runs list [--workflow W] [--status S] [--correlation-id ID] [--limit N] [--cursor C]
      Runs, newest first (20 by default, at most 100). The next page's cursor is
      printed last (in --json: nextCursor).
  nf runs get <run id>
      A run: status, times, reason, input, output and every task attempt.
  nf runs retry <run id>                          Retry the failed tasks of an ended run.
  nf runs rerun <run id> --from REF [--input FILE|JSON]
                                                  Run REF and everything after it again.
  nf runs restart <run id> [--version N|latest] [--input FILE|JSON]
                                                  Start an ended run over, in place.
  nf runs terminate <run id> [--reason TEXT]      Terminate a running or paused run.

retry, rerun and restart take --wait or --follow, as nf run does, and then
exit with the run's new outcome. An action the run's state does not allow (a
retry of a running run) is refused by the server: exit 3, with its reason.

Exit codes: 0 ok, 1 a waited-for run did not complete, 2 usage, 3 server or key, 4 not found.
`;

const seg = encodeURIComponent;

function oneRunId(positionals: string[], sub: string): string {
  if (positionals.length !== 1) throw new UsageError(`runs ${sub} takes one run id, got ${positionals.length === 0 ? "none" : positionals.join(" ")}`);
  return positionals[0]!;
}

function ago(iso: string | null): string {
  return iso === null ? "-" : iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function duration(startedAt: string, endedAt: string | null): string {
  return endedAt === null ? "-" : `${((Date.parse(endedAt) - Date.parse(startedAt)) / 1000).toFixed(2)}s`;
}

/** Every task of a run: GET /runs/{id} pages them. */
async function allTasks(client: NodeFlowClient, run: Run): Promise<RunTask[]> {
  const tasks = [...run.tasks.items];
  let cursor = run.tasks.nextCursor;
  while (cursor !== null) {
    const page = await client.getRun(run.id, { taskLimit: 100, taskCursor: cursor });
    tasks.push(...page.tasks.items);
    cursor = page.tasks.nextCursor;
  }
  return tasks;
}

function showRun(run: Run, tasks: RunTask[]): string {
  const head = [
    `run        ${run.id}`,
    `workflow   ${run.workflowName} v${run.workflowVersion}`,
    `status     ${run.status}${run.reasonForIncompletion ? `: ${run.reasonForIncompletion}` : ""}`,
    `started    ${ago(run.startedAt)}`,
    `ended      ${ago(run.endedAt)} (${duration(run.startedAt, run.endedAt)})`,
    ...(run.correlationId ? [`correlation ${run.correlationId}`] : []),
    `input      ${JSON.stringify(run.input)}`,
    `output     ${JSON.stringify(run.output)}`,
    "",
  ].join("\n");
  const rows = tasks.map((t) => [t.refName, t.taskType, t.iteration > 0 ? `${t.iteration}.${t.attempt}` : String(t.attempt), t.status, duration(t.startedAt ?? t.scheduledAt, t.endedAt), t.reasonForIncompletion ?? ""]);
  return `${head}\n${formatTable(["NODE", "TYPE", "ATTEMPT", "STATUS", "TOOK", "REASON"], rows)}`;
}

async function waitIfAsked(client: NodeFlowClient, remote: Remote, runId: string, values: Record<string, unknown>, json: boolean, output: Output, answer: unknown): Promise<number> {
  const follow = values.follow === true;
  if (values.wait !== true && !follow) {
    if (json) printJson(output, answer);
    else output.out(`${JSON.stringify(answer)}\n`);
    return EXIT.ok;
  }
  const ended = await followRun(client, remote, runId, output, { show: follow, viewTo: json ? "err" : "out" });
  if (!isTerminalWorkflowStatus(ended.status)) throw new Error(`run ${ended.id} is ${ended.status}, not ended`);
  if (json) printJson(output, ended);
  else output.out(describeEndedRun(ended));
  return exitCodeOf(ended);
}

export async function runRuns(argv: string[], env: Env, output: Output = PROCESS_OUTPUT): Promise<number> {
  const [sub, ...rest] = argv;
  const args = parseRemoteArgs(rest, env, {
    workflow: { type: "string" },
    status: { type: "string" },
    "correlation-id": { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    from: { type: "string" },
    input: { type: "string" },
    version: { type: "string" },
    reason: { type: "string" },
    wait: { type: "boolean", default: false },
    follow: { type: "boolean", default: false },
  });
  if (args.help || sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    if (sub === undefined) output.err(RUNS_HELP);
    else output.out(RUNS_HELP);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  const { values, positionals, remote, json } = args;
  const ns = `/ns/${seg(remote.namespace)}`;
  switch (sub) {
    case "list": {
      if (positionals.length > 0) throw new UsageError(`runs list takes no positional arguments, got ${positionals.join(" ")}`);
      const status = values.status as string | undefined;
      if (status !== undefined && !(WORKFLOW_STATUSES as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${WORKFLOW_STATUSES.join(", ")}; got "${status}"`);
      const client = clientFor(remote);
      const page = await client.searchRuns({
        ...(status === undefined ? {} : { status: status as WorkflowStatus }),
        ...(values.workflow === undefined ? {} : { workflow: values.workflow as string }),
        ...(values["correlation-id"] === undefined ? {} : { correlationId: values["correlation-id"] as string }),
        ...(values.limit === undefined ? {} : { limit: intFlag(values.limit, "--limit", 1, 100)! }),
        ...(values.cursor === undefined ? {} : { cursor: values.cursor as string }),
      });
      if (json) {
        printJson(output, page);
        return EXIT.ok;
      }
      const rows = page.items.map((r: RunSummary) => [r.id, `${r.workflowName} v${r.workflowVersion}`, r.status, ago(r.startedAt), duration(r.startedAt, r.endedAt), r.reasonForIncompletion ?? ""]);
      output.out(page.items.length === 0 ? "no runs\n" : formatTable(["RUN", "WORKFLOW", "STATUS", "STARTED", "TOOK", "REASON"], rows));
      if (page.nextCursor !== null) output.out(`more: --cursor ${page.nextCursor}\n`);
      return EXIT.ok;
    }
    case "get": {
      const runId = oneRunId(positionals, sub);
      const client = clientFor(remote);
      const run = await client.getRun(runId, { taskLimit: 100 });
      const tasks = await allTasks(client, run);
      if (json) printJson(output, { ...run, tasks: { items: tasks, nextCursor: null } });
      else output.out(showRun(run, tasks));
      return EXIT.ok;
    }
    case "retry": {
      const runId = oneRunId(positionals, sub);
      const client = clientFor(remote);
      const answer = await client.request({ method: "POST", path: `${ns}/runs/${seg(runId)}/retry` });
      return waitIfAsked(client, remote, runId, values, json, output, answer);
    }
    case "rerun": {
      const runId = oneRunId(positionals, sub);
      if (typeof values.from !== "string") throw new UsageError("runs rerun needs --from REF: the node to run again from");
      const input = values.input === undefined ? undefined : await readJsonObjectArg(values.input as string, "--input");
      const client = clientFor(remote);
      const answer = await client.request({ method: "POST", path: `${ns}/runs/${seg(runId)}/rerun`, body: { fromRef: values.from, ...(input === undefined ? {} : { input }) } });
      return waitIfAsked(client, remote, runId, values, json, output, answer);
    }
    case "restart": {
      const runId = oneRunId(positionals, sub);
      const version = values.version === "latest" ? "latest" : intFlag(values.version, "--version");
      const input = values.input === undefined ? undefined : await readJsonObjectArg(values.input as string, "--input");
      const client = clientFor(remote);
      const answer = await client.request({ method: "POST", path: `${ns}/runs/${seg(runId)}/restart`, body: { ...(version === undefined ? {} : { version }), ...(input === undefined ? {} : { input }) } });
      return waitIfAsked(client, remote, runId, values, json, output, answer);
    }
    case "terminate": {
      const runId = oneRunId(positionals, sub);
      const client = clientFor(remote);
      const answer = await client.terminateRun(runId, values.reason === undefined ? {} : { reason: values.reason as string });
      if (json) printJson(output, answer);
      else output.out(`run ${answer.id} ${answer.status}\n`);
      return EXIT.ok;
    }
    default:
      throw new UsageError(`unknown runs command "${sub}": use list, get, retry, rerun, restart or terminate`);
  }
}
