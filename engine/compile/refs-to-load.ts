import type { TaskStatus } from "../statuses";
import { agentChildRefs, parseAgentChildRef } from "../definition/agent-schema";
import { blueprintNode } from "./compile";
import type { Blueprint, BlueprintNode } from "./types";

/**
 * Which rows an evaluation loads (invariant 6): the evaluator in server/ reads
 * the frontier (non-terminal rows plus terminal rows with `deciderSeenAt IS
 * NULL`), calls {@link refsToLoad} with their refs, and loads each returned
 * ref's latest row by `(iteration DESC, attempt DESC)` — one indexed point
 * lookup per ref on `TaskExecutions_identity_idx`. Cost is O(refs the
 * evaluation can touch), never O(tasks in the workflow): a 30,000-iteration
 * loop or a 30,000-instance fork loads the same rows as a 5-task chain.
 */

/** Separator of a dynamic-fork instance ref. Node refs match REF_PATTERN, which has no `#`, so instances never collide with nodes. */
export const FORK_INSTANCE_SEPARATOR = "#";

/** The ref of dynamic-fork instance `index` (0-based) of fork node `forkRef`: `"<forkRef>#<index>"`. */
export function forkInstanceRef(forkRef: string, index: number): string {
  return `${forkRef}${FORK_INSTANCE_SEPARATOR}${index}`;
}

/** The fork and index a dynamic-fork instance ref denotes, or undefined for a node ref. */
export function parseForkInstanceRef(ref: string): { forkRef: string; index: number } | undefined {
  const at = ref.lastIndexOf(FORK_INSTANCE_SEPARATOR);
  if (at <= 0) return undefined;
  const digits = ref.slice(at + 1);
  if (!/^(?:0|[1-9]\d{0,9})$/.test(digits)) return undefined;
  return { forkRef: ref.slice(0, at), index: Number(digits) };
}

/** A terminal row not yet seen: its ref, and its status when known (a SKIPPED one makes its successors' dead paths load). */
export type UnprocessedRef = string | { ref: string; status: TaskStatus };

/** Walk modes: `normal` follows nodes decide may resolve on the spot; `skip` follows a dead path, which any node type continues. */
type Mode = 0 | 1;
const NORMAL: Mode = 0;
const SKIP: Mode = 1;

/**
 * The refs whose latest rows decide needs, sorted, given the refs of the
 * frontier's non-terminal tasks and of its unseen terminal tasks (fork
 * instance refs are accepted and stand for their fork).
 *
 * What an evaluation can touch, and so what is returned (each node's own ref
 * plus its blueprint `reads`):
 * - the start nodes (no row for any of them means the workflow has not started);
 * - each unseen terminal task's node and its successors, and onwards through
 *   successors decide resolves on the spot (NOOP, SWITCH, JOIN, SET_VARIABLE,
 *   WAIT, DO_WHILE…); past a SWITCH — or an unseen SKIPPED row — through the
 *   whole dead path, since dead-path elimination can skip any node type;
 * - each frontier task decide may end itself (WAIT timers, DO_WHILE iteration
 *   ends, an optional task's final timeout) and its cascade; a loop's body
 *   entries (a new iteration starts there);
 * - for a dynamic-fork instance, its fork's row only: an instance's end changes
 *   the fork's counters or ends the fork through the shell
 *   (`aggregateForkOutput`), and the fork's successors are decided in the next
 *   evaluation, which sees the fork's own row unseen and loads its cascade then.
 *   A running fork (in the frontier) likewise never resolves its successors;
 * - for an agent in flight or one of its steps: the agent and its successors
 *   (it may end), and the rows of its current turn (`agentChildRefs`, a
 *   bounded handful: decide/agent.ts);
 * - the enclosing loop of anything touched, and the workflow's output reads.
 *
 * Every node is walked at most once per mode, so this is O(nodes touched +
 * their reads). It is bounded by the definition, not by the run.
 */
export function refsToLoad(blueprint: Blueprint, frontierRefs: readonly string[], unprocessedRefs: readonly UnprocessedRef[]): string[] {
  const touched = new Set<string>();
  // Nodes decide may decide (readiness, input, a loop's condition) need their reads;
  // a row decide only reacts to needs just itself.
  const reading = new Set<string>();
  // Per mode: nodes queued, and nodes expanded (their successors queued).
  const queued: [Set<string>, Set<string>] = [new Set(), new Set()];
  const expanded: [Set<string>, Set<string>] = [new Set(), new Set()];
  const queue: [BlueprintNode, Mode][] = [];
  const node = (ref: string): BlueprintNode | undefined => blueprintNode(blueprint, parseAgentChildRef(ref)?.agentRef ?? parseForkInstanceRef(ref)?.forkRef ?? ref);
  // Agents in flight: decide reads their current turn's rows (a model call, up to AGENT_MAX_TOOL_CALLS_PER_TURN tool calls and their approvals).
  const agents = new Set<string>();

  const touch = (n: BlueprintNode, withReads = true): void => {
    touched.add(n.ref);
    if (withReads) reading.add(n.ref);
    const p = n.parent === null ? undefined : blueprintNode(blueprint, n.parent);
    // The loop may end its iteration (its body entries start again) or end altogether.
    if (p !== undefined) expand(p, NORMAL);
  };
  const enqueue = (ref: string, mode: Mode): void => {
    const n = blueprintNode(blueprint, ref);
    if (n === undefined || queued[mode].has(ref)) return;
    queued[mode].add(ref);
    queue.push([n, mode]);
  };
  /** n resolves (or may) in this evaluation: queue what decide looks at next. */
  const expand = (n: BlueprintNode, mode: Mode, seed = false): void => {
    touch(n, !seed || n.type === "DO_WHILE");
    if (expanded[mode].has(n.ref)) return;
    expanded[mode].add(n.ref);
    const next: Mode = mode === SKIP || n.type === "SWITCH" ? SKIP : NORMAL;
    for (const e of n.successors) enqueue(e.ref, next);
    for (const b of n.bodyEntries) enqueue(b, NORMAL);
  };

  for (const ref of blueprint.startNodes) {
    const n = blueprintNode(blueprint, ref);
    if (n !== undefined) touch(n, false);
  }
  for (const ref of frontierRefs) {
    const n = node(ref);
    if (n === undefined) continue;
    if (n.type === "AGENT") agents.add(n.ref);
    const mayEndHere = n.type === "WAIT" || n.type === "DO_WHILE" || n.type === "AGENT" || (n.optional && (n.policy.timeoutSeconds > 0 || n.policy.pollTimeoutSeconds > 0));
    if (mayEndHere) expand(n, NORMAL, true);
    else touch(n, false);
  }
  for (const u of unprocessedRefs) {
    const ref = typeof u === "string" ? u : u.ref;
    const n = node(ref);
    if (n === undefined) continue;
    // An agent's step may end the agent (its successors run) or start the next step.
    if (n.type === "AGENT") {
      agents.add(n.ref);
      expand(n, NORMAL, true);
    }
    // An instance's end never resolves its fork's successors in this evaluation (see above): the fork's row is enough.
    else if (parseForkInstanceRef(ref) !== undefined) touch(n, false);
    else expand(n, typeof u !== "string" && u.status === "SKIPPED" ? SKIP : NORMAL, true);
  }
  for (let q = 0; q < queue.length; q++) {
    const [n, mode] = queue[q]!;
    touch(n);
    // On a dead path every node may be skipped and pass the skip on; off it, only
    // nodes decide resolves itself let the evaluation continue past them.
    if (mode === SKIP || n.resolvesInDecide) expand(n, mode);
  }

  const out = new Set<string>(blueprint.outputReads);
  for (const ref of agents) {
    // Approval rows exist only for tools that ask for them: no lookups for the rest.
    const tools = (blueprintNode(blueprint, ref)?.config.agent as { tools?: unknown } | undefined)?.tools;
    const approvals = Array.isArray(tools) && tools.some((t) => (t as { approval?: unknown } | null)?.approval === true);
    for (const child of agentChildRefs(ref, approvals)) out.add(child);
  }
  for (const ref of touched) out.add(ref);
  for (const ref of reading) for (const r of blueprintNode(blueprint, ref)?.reads ?? []) out.add(r);
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
