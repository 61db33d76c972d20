import { isTerminalWorkflowStatus } from "../engine/statuses";
import type { Run } from "../sdk";
import { followRun } from "./follow-run";
import { UsageError } from "./help";
import { EXIT, PROCESS_OUTPUT, clientFor, intFlag, parseRemoteArgs, printJson, readJsonObjectArg } from "./remote";
import type { Env, Output } from "./remote";

export const RUN_HELP = `nf run <workflow> [--version N] [--input FILE|JSON] [--correlation-id ID]
       [--wait | --follow] [--json] [--url URL] [--namespace NS] [--api-key KEY]

Starts a run of a workflow definition (its latest version, or --version N).
--input takes a JSON object inline ('{"orderId":"o-1"}') or a file holding one.

Without --wait or --follow, prints the run id and exits 0 once the run is
written. --wait waits for the run to end; --follow also shows each node's
status as it changes (drawn in place on a terminal, one line per change in a
log), from the server's live stream, or by polling where the stream cannot be
reached. Both exit with the run's outcome: 0 COMPLETED, 1 FAILED, TIMED_OUT or
TERMINATED.

--json prints the start answer ({ id, created }), or with --wait/--follow the
run as it ended; the live view then goes to stderr.

Exit codes: 0 ok, 1 the run did not complete, 2 usage, 3 server or key, 4 not found.
`;

/** The outcome of an ended run as an exit code. */
export function exitCodeOf(run: Pick<Run, "status">): number {
  return run.status === "COMPLETED" ? EXIT.ok : EXIT.failed;
}

/** One line for a run that ended, then its output or reason. */
export function describeEndedRun(run: Run): string {
  const took = run.endedAt === null ? "" : ` in ${((Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 1000).toFixed(2)}s`;
  const lines = [`run ${run.id} ${run.status}${took}`];
  if (run.reasonForIncompletion) lines.push(`reason: ${run.reasonForIncompletion}${run.failedTaskRef ? ` (node ${run.failedTaskRef})` : ""}`);
  if (run.status === "COMPLETED") lines.push(`output: ${JSON.stringify(run.output)}`);
  return `${lines.join("\n")}\n`;
}

export async function runRun(argv: string[], env: Env, output: Output = PROCESS_OUTPUT): Promise<number> {
  const args = parseRemoteArgs(argv, env, {
    version: { type: "string" },
    input: { type: "string" },
    "correlation-id": { type: "string" },
    wait: { type: "boolean", default: false },
    follow: { type: "boolean", default: false },
  });
  if (args.help) {
    output.out(RUN_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length !== 1) throw new UsageError(args.positionals.length === 0 ? "run needs a workflow name: nf run order_flow" : `run starts one workflow, got ${args.positionals.length}: ${args.positionals.join(" ")}`);
  const name = args.positionals[0]!;
  const version = intFlag(args.values.version, "--version");
  const input = args.values.input === undefined ? {} : await readJsonObjectArg(args.values.input as string, "--input");
  const correlationId = args.values["correlation-id"] as string | undefined;
  const wait = args.values.wait === true || args.values.follow === true;
  const client = clientFor(args.remote);

  const started = await client.startRun({ name, input, ...(version === undefined ? {} : { version }), ...(correlationId === undefined ? {} : { correlationId }) });
  if (!wait) {
    if (args.json) printJson(output, started);
    else output.out(`${started.id}\n`);
    return EXIT.ok;
  }
  if (!args.json && args.values.follow !== true) output.err(`started run ${started.id}\n`);
  const ended = await followRun(client, args.remote, started.id, output, { show: args.values.follow === true, viewTo: args.json ? "err" : "out" });
  if (!isTerminalWorkflowStatus(ended.status)) throw new Error(`run ${ended.id} is ${ended.status}, not ended`);
  if (args.json) printJson(output, ended);
  else output.out(describeEndedRun(ended));
  return exitCodeOf(ended);
}
