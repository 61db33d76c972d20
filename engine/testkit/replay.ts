/**
 * replay(): re-run a recorded history through today's decider and report the
 * first evaluation whose commands differ from the recording — the replay
 * tests of Temporal's SDK (STYLE.md). A change to decide (or to compile, or to
 * how state is loaded) that would make a running workflow behave differently
 * from how it started shows up here as the exact step, with both command lists.
 *
 * How: the recorded events are applied, in order, to a fresh {@link TaskStore};
 * at each `evaluated` event the store's state goes to today's `decide`, and its
 * commands are compared with the recorded ones (as JSON: key order and
 * `undefined` fields do not matter). On a match the *recorded* commands are
 * applied and replay moves on; on the first mismatch it stops.
 */
import type { Blueprint, CompileOptions } from "../compile";
import { compile } from "../compile";
import { decide } from "../decide";
import type { Command } from "../decide/types";
import type { TaskPolicy, WorkflowDefinition } from "../definition";
import { validateDefinition } from "../definition";
import type { ScriptEvaluator } from "../expressions";
import type { HistoryEvent, WorkflowHistory } from "./history";
import { parseHistory } from "./history";
import { compareCommands } from "./command-diff";
import { SimulationSetupError, scriptsUnavailable } from "./setup-error";
import type { Decider } from "./simulate";
import { TaskStore } from "./task-store";

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** The script sandbox, when the workflow's SWITCH or DO_WHILE conditions run scripts (INLINE results come from the history). */
  scripts?: ScriptEvaluator;
  /** Registered task definitions' policies, when replaying from a definition (as for `simulate`). */
  taskDefinitions?: Readonly<Record<string, TaskPolicy>>;
  /** The decider to check. Default: today's `decide`. */
  decide?: Decider;
}

/** The history replays: today's decider returns what was recorded, at every evaluation. */
export interface ReplayMatch {
  ok: true;
  /** Evaluations compared. */
  evaluations: number;
}

/** The first evaluation where today's decider disagrees with the recording. */
export interface ReplayDivergence {
  ok: false;
  /** Index of the `evaluated` event in `history.events`. */
  step: number;
  /** Its 1-based evaluation ordinal. */
  evaluation: number;
  /** The virtual time of that evaluation, epoch ms. */
  at: number;
  /** The recorded commands. */
  expected: Command[];
  /** Today's commands (empty when decide threw). */
  actual: Command[];
  /** Which command differs and how, in one paragraph. */
  explanation: string;
}

/** What {@link replay} returns. */
export type ReplayResult = ReplayMatch | ReplayDivergence;

/**
 * Re-runs `history` through today's `decide` and reports the first divergence.
 *
 * @param source the workflow: its definition (validated and compiled here,
 * as at registration) or a stored blueprint.
 * @param history a {@link WorkflowHistory}, e.g. `simulate(...).history`, as
 * an object or JSON text.
 *
 * @example
 * ```ts
 * const recorded = JSON.parse(readFileSync("fixtures/order-history.json", "utf8"));
 * expect(replay(orderWorkflow, recorded)).toEqual({ ok: true, evaluations: expect.any(Number) });
 * ```
 *
 * @throws HistoryFormatError when `history` is not a readable history;
 * SimulationSetupError when the definition is invalid or decide needs
 * `options.scripts`.
 */
export function replay(source: WorkflowDefinition | Blueprint, history: WorkflowHistory | string, options: ReplayOptions = {}): ReplayResult {
  const h = parseHistory(history);
  const blueprint = toBlueprint(source, options);
  const scripts = options.scripts ?? scriptsUnavailable(blueprint.name);
  const store = new TaskStore(blueprint, h.workflow);
  let evaluations = 0;

  for (let step = 0; step < h.events.length; step++) {
    const event: HistoryEvent = h.events[step]!;
    switch (event.type) {
      case "evaluated": {
        evaluations++;
        const expected = event.commands;
        const diverge = (actual: Command[], explanation: string): ReplayDivergence => ({ ok: false, step, evaluation: event.evaluation, at: event.at, expected, actual, explanation });
        let actual: Command[];
        try {
          actual = toJson((options.decide ?? decide)(blueprint, store.evaluationState(event.firedTimers), event.at, { scripts }).commands);
        } catch (e) {
          if (e instanceof SimulationSetupError) throw e;
          return diverge([], `evaluation ${event.evaluation} (history step ${step}): decide threw ${e instanceof Error ? e.message : String(e)}`);
        }
        const difference = compareCommands(expected, actual);
        if (difference !== undefined) return diverge(actual, `evaluation ${event.evaluation} (history step ${step}, at +${(event.at - h.workflow.startedAt) / 1000}s): ${difference}`);
        const applied = store.applyDecision(expected, event.at);
        if (applied.ok !== (event.outcome === "applied")) {
          const how = applied.ok ? "applied cleanly" : `was rolled back (${applied.reason})`;
          return diverge(actual, `evaluation ${event.evaluation} (history step ${step}): the same commands were recorded as ${event.outcome} but now ${how}`);
        }
        break;
      }
      case "taskPolled":
        store.poll(event.taskId, event.at, event.workerId);
        break;
      case "taskUpdated": {
        const update: Parameters<TaskStore["update"]>[1] = { status: event.status, output: event.output };
        if (event.reasonForIncompletion !== undefined) update.reasonForIncompletion = event.reasonForIncompletion;
        if (event.callbackAfterSeconds !== undefined) update.callbackAfterSeconds = event.callbackAfterSeconds;
        store.update(event.taskId, update, event.at);
        break;
      }
      case "timerFired":
        store.fireTimer(event.timer, event.taskId);
        break;
    }
  }
  return { ok: true, evaluations };
}

function toBlueprint(source: WorkflowDefinition | Blueprint, options: ReplayOptions): Blueprint {
  if ("blueprintVersion" in source) return source;
  const validation = validateDefinition(source);
  if (!validation.ok) {
    throw new SimulationSetupError("invalid-definition", `workflow ${JSON.stringify(source.name)} is invalid: ${validation.problems.map((p) => p.code).join(", ")}`, validation.problems);
  }
  const compileOptions: CompileOptions = {};
  const defs = options.taskDefinitions;
  if (defs !== undefined) compileOptions.taskPolicy = (name) => (Object.prototype.hasOwnProperty.call(defs, name) ? defs[name] : undefined);
  return compile(validation.definition, compileOptions);
}

function toJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
