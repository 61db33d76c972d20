import { isTerminalWorkflowStatus } from "../engine/statuses";
import type { WorkflowStatus } from "../engine/statuses";
import type { NodeFlowClient, Run } from "../sdk";
import { CliFailure, EXIT } from "./remote";
import type { Output, Remote } from "./remote";
import { SseOpenError, readSse } from "./sse-client";

/**
 * Following a run to its end, for `nf run --wait/--follow`: the node statuses
 * as they change, drawn in place on a terminal (like `temporal workflow show
 * --follow`) or one line per change otherwise, and the run as it ended.
 *
 * The live view reads the run's SSE stream (GET /api/executions/{id}/stream,
 * which accepts the API key as a Bearer token, authorized "read" in the
 * namespace): `history` messages carry each task's status change, `tasks`
 * the in-flight frontier (a lease turns a task IN_PROGRESS without an event),
 * `workflow` the run's status. A stream that ends early is reopened from the
 * last seq it sent (Last-Event-ID), so nothing is shown twice or missed. When
 * the stream cannot be opened at all (a proxy that buffers or blocks SSE, a
 * server without it), the run is polled once a second instead: coarser, but
 * it reaches the same end.
 */

const POLL_MS = 1000;
const MAX_STREAM_REOPENS = 5;

/** One node's latest task, as the view shows it. */
interface NodeState {
  ref: string;
  status: string;
  iteration: number;
  attempt: number;
  reason?: string;
}

export interface FollowOptions {
  /** Draw node statuses; false only waits (a progress line on a terminal). */
  show: boolean;
  /** Where the view goes: stdout normally, stderr when stdout carries --json. */
  viewTo: "out" | "err";
  signal?: AbortSignal;
  /** Test hook: skip the stream and poll. */
  forcePolling?: boolean;
}

/** A view of a run's nodes: a line per change in a log, a block redrawn in place on a terminal. */
export class RunView {
  private readonly nodes = new Map<string, NodeState>();
  private status: string = "RUNNING";
  private drawnLines = 0;
  private progressShown = false;
  private readonly startedAt = performance.now();

  constructor(
    private readonly runId: string,
    private readonly output: Output,
    private readonly options: FollowOptions,
  ) {}

  private write(text: string): void {
    if (this.options.viewTo === "out") this.output.out(text);
    else this.output.err(text);
  }

  private get redraws(): boolean {
    // Redraw in place only on a terminal; a log file gets one line per change.
    return this.options.viewTo === "out" ? this.output.outTty : this.output.errTty;
  }

  task(ref: string, status: string, iteration: number, attempt: number, reason?: string): void {
    const known = this.nodes.get(ref);
    // A row of an older iteration or attempt arriving late never overwrites the newer one.
    if (known && (iteration < known.iteration || (iteration === known.iteration && attempt < known.attempt))) return;
    if (known && known.status === status && known.iteration === iteration && known.attempt === attempt) return;
    const state: NodeState = { ref, status, iteration, attempt };
    if (reason !== undefined) state.reason = reason;
    this.nodes.set(ref, state);
    this.changed(`${ref}  ${status}${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}${iteration > 0 ? ` [iteration ${iteration}]` : ""}${reason ? `: ${reason}` : ""}`);
  }

  workflow(status: string): void {
    if (status === this.status) return;
    this.status = status;
    this.changed(`run ${status}`);
  }

  private changed(line: string): void {
    if (!this.options.show) {
      // --wait alone: one progress line on a terminal's stderr, redrawn; nothing in a log.
      if (!this.output.errTty) return;
      const done = [...this.nodes.values()].filter((n) => mark(n.status) !== "·" && mark(n.status) !== "⟳").length;
      this.output.err(`\r\u001b[2Kwaiting for run ${this.runId}: ${this.status}, ${done} of ${this.nodes.size} node(s) done, ${this.elapsed()}`);
      this.progressShown = true;
      return;
    }
    if (!this.redraws) {
      this.write(`+${this.elapsed()}  ${line}\n`);
      return;
    }
    const lines = [`run ${this.runId}  ${this.status}  ${this.elapsed()}`, ...[...this.nodes.values()].map((n) => `  ${mark(n.status)} ${n.ref.padEnd(24)} ${n.status}${n.attempt > 0 ? ` (attempt ${n.attempt + 1})` : ""}${n.reason ? `  ${n.reason.slice(0, 80)}` : ""}`)];
    // Move up over the previous drawing and clear to the end of the screen.
    const up = this.drawnLines > 0 ? `\u001b[${this.drawnLines}F\u001b[0J` : "";
    this.write(`${up}${lines.join("\n")}\n`);
    this.drawnLines = lines.length;
  }

  /** Ends the progress line, if one was drawn. */
  finish(): void {
    if (this.progressShown) this.output.err("\n");
  }

  private elapsed(): string {
    return `${((performance.now() - this.startedAt) / 1000).toFixed(1)}s`;
  }
}

function mark(status: string): string {
  switch (status) {
    case "COMPLETED":
    case "COMPLETED_WITH_ERRORS":
      return "✓";
    case "FAILED":
    case "FAILED_WITH_TERMINAL_ERROR":
    case "TIMED_OUT":
    case "CANCELED":
      return "✗";
    case "SKIPPED":
      return "-";
    case "IN_PROGRESS":
      return "⟳";
    default:
      return "·";
  }
}

interface HistoryData {
  ref?: string | null;
  status?: string | null;
  iteration?: number;
  attempt?: number;
  reason?: string;
}

interface TasksData {
  tasks?: { ref: string; status: string; iteration: number; attempt: number }[];
}

/** Waits for `runId` to end (showing its nodes when asked) and returns the run as it ended. */
export async function followRun(client: NodeFlowClient, remote: Remote, runId: string, output: Output, options: FollowOptions): Promise<Run> {
  const view = new RunView(runId, output, options);
  const signal = options.signal ?? new AbortController().signal;
  try {
    if (!options.forcePolling && remote.apiKey !== undefined) {
      const ended = await followStream(remote, runId, view, signal);
      if (ended === "ended") return await client.getRun(runId, { taskLimit: 100 });
      if (ended === "refused") throw new CliFailure(`the live stream of run ${runId} refused the API key (it needs the read permission in namespace "${remote.namespace}")`, EXIT.server);
    }
    return await pollRun(client, runId, view, signal);
  } finally {
    view.finish();
  }
}

/** "ended" when the run reached a terminal status; "unavailable" when polling must take over. */
async function followStream(remote: Remote, runId: string, view: RunView, signal: AbortSignal): Promise<"ended" | "unavailable" | "refused"> {
  const url = `${remote.baseUrl}/api/executions/${encodeURIComponent(runId)}/stream?namespace=${encodeURIComponent(remote.namespace)}`;
  let lastId: string | undefined;
  for (let opened = 0; opened <= MAX_STREAM_REOPENS && !signal.aborted; opened++) {
    try {
      for await (const message of readSse(url, remote.apiKey!, signal, lastId === undefined ? {} : { lastEventId: lastId })) {
        if (message.id !== undefined) lastId = message.id;
        const data = JSON.parse(message.data) as unknown;
        if (message.event === "history") {
          const h = data as HistoryData;
          if (typeof h.ref === "string" && typeof h.status === "string") view.task(h.ref, h.status, h.iteration ?? 0, h.attempt ?? 0, h.reason);
        } else if (message.event === "tasks") {
          for (const t of (data as TasksData).tasks ?? []) view.task(t.ref, t.status, t.iteration, t.attempt);
        } else if (message.event === "workflow") {
          const status = (data as { status: WorkflowStatus }).status;
          view.workflow(status);
          if (isTerminalWorkflowStatus(status)) return "ended";
        }
      }
    } catch (error) {
      if (error instanceof SseOpenError) {
        if (error.status === 401 || error.status === 403) return "refused";
        return "unavailable";
      }
      if (signal.aborted) break;
      // The connection broke mid-stream: reopen from the last seq shown.
    }
  }
  return "unavailable";
}

async function pollRun(client: NodeFlowClient, runId: string, view: RunView, signal: AbortSignal): Promise<Run> {
  for (;;) {
    const run = await client.getRun(runId, { taskLimit: 100 }, { signal });
    let cursor = run.tasks.nextCursor;
    const tasks = [...run.tasks.items];
    while (cursor !== null) {
      const page = await client.getRun(runId, { taskLimit: 100, taskCursor: cursor }, { signal });
      tasks.push(...page.tasks.items);
      cursor = page.tasks.nextCursor;
    }
    for (const t of tasks) view.task(t.refName, t.status, t.iteration, t.attempt, t.reasonForIncompletion ?? undefined);
    view.workflow(run.status);
    if (isTerminalWorkflowStatus(run.status)) return run;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (signal.aborted) throw new Error("aborted");
  }
}
