import { TASK_STATUSES, WORKFLOW_STATUSES, isTerminalWorkflowStatus } from "../engine/statuses";
import type { WorkflowStatus } from "../engine/statuses";
import { UsageError } from "./help";
import { CliFailure, EXIT, PROCESS_OUTPUT, clientFor, parseRemoteArgs } from "./remote";
import type { Env, Output, Remote } from "./remote";
import { SseOpenError, readSse } from "./sse-client";

export const TAIL_HELP = `nf tail [--workflow W] [--status S] [--no-tasks] [--json] [--url URL] [--namespace NS] [--api-key KEY]

Prints the namespace's run and task events live, until Ctrl-C: a line when a
run starts or changes status, and for runs seen running, a line per task
status change (scheduled, in progress, completed, failed, retried…).
--workflow keeps one definition's runs; --status keeps events with that run
or task status (FAILED shows failed runs and failed task attempts);
--no-tasks shows run events only. --json prints one JSON object per line
({"kind":"run",…} or {"kind":"task",…}).

Task events come from each run's own live stream, for at most ${"${MAX}"} runs at
once; runs beyond that are shown by their run events alone (said once on
stderr). A run that ends within a moment may print its end before its task
lines. A run that was already running when tail started shows up at its next
status change.

Exit codes: 0 stopped by Ctrl-C, 2 usage, 3 server or key, 4 namespace not found.
`;

/** Runs whose task streams are open at once: each is one connection and one reader on the server. */
const MAX_FOLLOWED_RUNS = 50;

/** Runs whose last printed event is remembered (insertion-ordered; the oldest are forgotten first). */
const REMEMBERED_RUNS = 10_000;

const HELP = TAIL_HELP.replace("${MAX}", String(MAX_FOLLOWED_RUNS));

interface RunEvent {
  id: string;
  workflow: string;
  version: number | null;
  status: WorkflowStatus;
  startedAt: string;
  endedAt: string | null;
  reasonForIncompletion: string | null;
}

interface TaskEvent {
  seq: number;
  at: string;
  type: string;
  ref: string | null;
  status: string | null;
  iteration?: number;
  attempt?: number;
  reason?: string;
}

export async function runTail(argv: string[], env: Env, output: Output = PROCESS_OUTPUT, signal?: AbortSignal): Promise<number> {
  const args = parseRemoteArgs(argv, env, { workflow: { type: "string" }, status: { type: "string" }, "no-tasks": { type: "boolean", default: false } });
  if (args.help) {
    output.out(HELP);
    return EXIT.ok;
  }
  if (args.positionals.length > 0) throw new UsageError(`tail takes no positional arguments, got ${args.positionals.join(" ")}`);
  const status = args.values.status as string | undefined;
  if (status !== undefined && !([...WORKFLOW_STATUSES, ...TASK_STATUSES] as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be a run or task status (${[...new Set([...WORKFLOW_STATUSES, ...TASK_STATUSES])].join(", ")}); got "${status}"`);
  }
  clientFor(args.remote); // the key check, before anything is opened
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal?.addEventListener("abort", stop);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await tail(args.remote, { workflow: args.values.workflow as string | undefined, status, tasks: args.values["no-tasks"] !== true, json: args.json }, output, controller.signal);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return EXIT.ok;
}

interface TailFilter {
  workflow: string | undefined;
  status: string | undefined;
  tasks: boolean;
  json: boolean;
}

async function tail(remote: Remote, filter: TailFilter, output: Output, signal: AbortSignal): Promise<void> {
  const followed = new Map<string, AbortController>();
  let saidFull = false;
  const print = (line: Record<string, unknown>, text: string) => output.out(filter.json ? `${JSON.stringify(line)}\n` : `${text}\n`);

  // The last history seq printed per run: a run that changes again (a retry) is read on from there, never from the start twice.
  const printedSeq = new Map<string, number>();
  const followTasks = (run: RunEvent) => {
    // A run that started and ended within one batch of the feed arrives already ended: its history is still read, once.
    if (!filter.tasks || followed.has(run.id)) return;
    if (followed.size >= MAX_FOLLOWED_RUNS) {
      if (!saidFull) output.err(`nf tail: following the tasks of ${MAX_FOLLOWED_RUNS} runs already; further runs show run events only\n`);
      saidFull = true;
      return;
    }
    const own = new AbortController();
    const abort = () => own.abort();
    signal.addEventListener("abort", abort);
    followed.set(run.id, own);
    const after = printedSeq.get(run.id) ?? 0;
    const url = `${remote.baseUrl}/api/executions/${encodeURIComponent(run.id)}/stream?namespace=${encodeURIComponent(remote.namespace)}&after=${after}`;
    void (async () => {
      try {
        for await (const message of readSse(url, remote.apiKey!, own.signal)) {
          if (message.event === "workflow") {
            // History comes before the status in each round, so an ended run's events are all printed by now.
            if (isTerminalWorkflowStatus((JSON.parse(message.data) as RunEvent).status)) break;
            continue;
          }
          if (message.event !== "history") continue;
          const e = JSON.parse(message.data) as TaskEvent;
          printedSeq.delete(run.id);
          printedSeq.set(run.id, e.seq);
          if (printedSeq.size > REMEMBERED_RUNS) printedSeq.delete(printedSeq.keys().next().value!);
          if (e.ref === null || e.status === null) continue;
          if (filter.status !== undefined && e.status !== filter.status) continue;
          const key = `${e.ref}[${e.iteration ?? 0}.${e.attempt ?? 0}]`;
          print(
            { kind: "task", runId: run.id, workflow: run.workflow, ...e },
            `${e.at}  task  ${run.id}  ${run.workflow}  ${key}  ${e.status}${e.reason ? `  ${e.reason}` : ""}`,
          );
        }
      } catch (error) {
        if (!own.signal.aborted) output.err(`nf tail: the task stream of run ${run.id} ended: ${(error as Error).message}\n`);
      } finally {
        own.abort();
        signal.removeEventListener("abort", abort);
        followed.delete(run.id);
      }
    })();
  };

  const url = `${remote.baseUrl}/api/executions/stream?namespace=${encodeURIComponent(remote.namespace)}`;
  let connected = false;
  while (!signal.aborted) {
    try {
      const onOpen = () => {
        if (!connected) output.err(`nf tail: watching namespace ${remote.namespace} at ${remote.baseUrl} (Ctrl-C stops)\n`);
        connected = true;
      };
      for await (const message of readSse(url, remote.apiKey!, signal, { onOpen })) {
        if (message.event === "resync") {
          output.err("nf tail: the server lost track of some changes; events may be missing here\n");
          continue;
        }
        if (message.event !== "execution") continue;
        const run = JSON.parse(message.data) as RunEvent;
        if (filter.workflow !== undefined && run.workflow !== filter.workflow) continue;
        followTasks(run);
        if (filter.status !== undefined && run.status !== filter.status) continue;
        print(
          { kind: "run", ...run },
          `${run.endedAt ?? run.startedAt}  run   ${run.id}  ${run.workflow} v${run.version ?? "-"}  ${run.status}${run.reasonForIncompletion ? `  ${run.reasonForIncompletion}` : ""}`,
        );
      }
    } catch (error) {
      if (error instanceof SseOpenError) {
        if (error.status === 401 || error.status === 403) throw new CliFailure(`the server refused the live stream (${error.message}): check NODE_FLOW_API_KEY and that it may read namespace "${remote.namespace}"`, EXIT.server);
        if (error.status === 404) throw new CliFailure(`no namespace "${remote.namespace}" the API key may read (${error.message})`, EXIT.notFound);
        if (!connected) throw new CliFailure(`cannot open the live stream at ${remote.baseUrl}: ${error.message}`, EXIT.server);
      }
      if (signal.aborted) break;
      output.err(`nf tail: the stream broke (${(error as Error).message}); reconnecting\n`);
    }
    if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  for (const own of followed.values()) own.abort();
}
