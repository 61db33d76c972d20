import { writeFile } from "node:fs/promises";
import { HistoryFormatError, SimulationSetupError, describeCommand, replay } from "../engine/testkit";
import type { ReplayResult } from "../engine/testkit";
import { createQuickJsScriptEvaluator } from "../server/sandbox/quickjs-script-evaluator";
import type { NodeFlowClient, RunTask } from "../sdk";
import { UsageError } from "./help";
import { CliFailure, EXIT, PROCESS_OUTPUT, clientFor, intFlag, parseRemoteArgs, printJson } from "./remote";
import type { Env, Output } from "./remote";
import { UnreplayableRunError, rebuildHistory } from "./run-history";
import type { RecordedEvent } from "./run-history";

export const REPLAY_HELP = `nf replay <run id> [--version N] [--history-out FILE] [--json] [--url URL] [--namespace NS] [--api-key KEY]

Fetches a run's recorded history from the server (its task attempts with
their results, and its events) and replays it through today's decider, in
this process, with the engine testkit:

  1. the run is rebuilt on the definition version it ran on, each task's
     recorded result fed back, and held against what production did: a
     task scheduled, skipped or never scheduled differently, or another end,
     is a divergence ("the decider now decides differently");
  2. the rebuilt history is replayed against the latest version of the
     definition (or --version N): the first evaluation whose commands differ
     is reported, with the recorded and the new commands.

--history-out writes the rebuilt history (the testkit's JSON format) to a
file, to keep as a replay fixture. Runs changed by an operator (retry, rerun,
restart, skip, pause, terminate) and runs with SUB_WORKFLOW nodes cannot be
rebuilt (exit 2, saying why).

Exit codes: 0 no divergence, 1 a divergence, 2 usage or a run that cannot be
replayed, 3 server or key, 4 run or version not found.
`;

const seg = encodeURIComponent;

async function allTasks(client: NodeFlowClient, runId: string) {
  const run = await client.getRun(runId, { taskLimit: 100 });
  const tasks: RunTask[] = [...run.tasks.items];
  let cursor = run.tasks.nextCursor;
  while (cursor !== null) {
    const page = await client.getRun(runId, { taskLimit: 100, taskCursor: cursor });
    tasks.push(...page.tasks.items);
    cursor = page.tasks.nextCursor;
  }
  return { run, tasks };
}

async function allEvents(client: NodeFlowClient, runId: string): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await client.request<{ events: RecordedEvent[]; nextAfter: number | null }>({ method: "GET", path: `/ns/${seg(client.namespace)}/runs/${seg(runId)}/history`, query: { after, limit: 1000 } });
    events.push(...page.events);
    if (page.nextAfter === null) return events;
    after = page.nextAfter;
  }
}

export async function runReplay(argv: string[], env: Env, output: Output = PROCESS_OUTPUT): Promise<number> {
  const args = parseRemoteArgs(argv, env, { version: { type: "string" }, "history-out": { type: "string" } });
  if (args.help) {
    output.out(REPLAY_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length !== 1) throw new UsageError("replay needs one run id: nf replay 0191d6a4-…");
  const runId = args.positionals[0]!;
  const version = intFlag(args.values.version, "--version");
  const client = clientFor(args.remote);
  const progress = (text: string) => {
    if (!args.json) output.err(`${text}\n`);
  };

  progress(`fetching run ${runId}…`);
  const { run, tasks } = await allTasks(client, runId);
  const events = await allEvents(client, runId);
  const recorded = await client.getDefinition(run.workflowName, { version: run.workflowVersion });
  const target = version === run.workflowVersion ? recorded : await client.getDefinition(run.workflowName, version === undefined ? {} : { version });
  progress(`rebuilding ${run.workflowName} v${run.workflowVersion} (${run.status}, ${tasks.length} task attempt(s), ${events.length} event(s))…`);

  const scripts = await createQuickJsScriptEvaluator();
  try {
    let rebuilt;
    try {
      rebuilt = await rebuildHistory(run, tasks, events, recorded.definition, scripts);
    } catch (error) {
      if (error instanceof UnreplayableRunError || error instanceof SimulationSetupError) throw new CliFailure(`cannot replay: ${error.message}`, EXIT.usage);
      throw error;
    }
    if (typeof args.values["history-out"] === "string") {
      await writeFile(args.values["history-out"], `${JSON.stringify(rebuilt.history, null, 2)}\n`);
      progress(`wrote the rebuilt history to ${args.values["history-out"]}`);
    }
    const against = { name: target.name, version: target.version };
    if (rebuilt.divergence !== undefined) {
      if (args.json) printJson(output, { runId, recordedVersion: run.workflowVersion, against, ok: false, stage: "production", explanation: rebuilt.divergence.what });
      else output.out(`✗ run ${runId} diverges from production under today's decider on v${run.workflowVersion}:\n    ${rebuilt.divergence.what}\n`);
      return EXIT.failed;
    }
    let result: ReplayResult;
    try {
      result = replay(target.definition, rebuilt.history, { scripts });
    } catch (error) {
      if (error instanceof SimulationSetupError || error instanceof HistoryFormatError) throw new CliFailure(`cannot replay against v${target.version}: ${error.message}`, EXIT.usage);
      throw error;
    }
    if (result.ok) {
      if (args.json) printJson(output, { runId, recordedVersion: run.workflowVersion, against, ok: true, evaluations: result.evaluations });
      else output.out(`✓ run ${runId} (v${run.workflowVersion}) replays against ${target.name} v${target.version}: ${result.evaluations} evaluation(s), same commands\n`);
      return EXIT.ok;
    }
    if (args.json) {
      printJson(output, { runId, recordedVersion: run.workflowVersion, against, ok: false, stage: "replay", evaluation: result.evaluation, step: result.step, at: new Date(result.at).toISOString(), explanation: result.explanation, expected: result.expected, actual: result.actual });
    } else {
      const list = (commands: readonly Parameters<typeof describeCommand>[0][]) => (commands.length === 0 ? "      (none)\n" : commands.map((c) => `      ${describeCommand(c)}\n`).join(""));
      output.out(
        `✗ run ${runId} (v${run.workflowVersion}) diverges against ${target.name} v${target.version} at evaluation ${result.evaluation}:\n    ${result.explanation}\n    recorded:\n${list(result.expected)}    now:\n${list(result.actual)}`,
      );
    }
    return EXIT.failed;
  } finally {
    await scripts.close();
  }
}
