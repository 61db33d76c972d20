/**
 * The blueprint: a definition compiled once at registration and stored beside
 * it (DESIGN.md, "The diagram is the definition"). Definitions are immutable
 * per (name, version), so a blueprint never changes either and an LRU cache
 * keyed on that pair never needs invalidating.
 *
 * Plain JSON — objects, arrays, strings, numbers, booleans, null; no
 * `undefined`, no Maps — with a deterministic key order, so two compiles of
 * the same definition are byte-equal under `JSON.stringify` and a stored
 * blueprint reads back as exactly what `compile` returned.
 */
import type { EffectiveTaskPolicy, NodeType } from "../definition";
import type { WORKFLOW_TIMEOUT_POLICIES } from "../definition";

/** The blueprint format's version. Bump it when the shape changes; stored blueprints of an older version are recompiled. */
export const BLUEPRINT_VERSION = 1;

/** An edge as the blueprint keeps it: the other end, and the SWITCH case it carries (null off a SWITCH). */
export interface BlueprintEdge {
  /** The target (in `successors`) or the source (in `incoming`). */
  ref: string;
  case: string | null;
}

/** One node, flattened for the decider. */
export interface BlueprintNode {
  ref: string;
  type: NodeType;
  /** The task definition name: `name` when set, else the type (Conductor names system tasks after their type). */
  taskDefName: string;
  /** The DO_WHILE whose body holds the node, or null at the top level. */
  parent: string | null;
  /** Position in the definition's `nodes` (ties break on it, so decisions are deterministic). */
  index: number;
  /** Outgoing edges in definition order (several may share a target under different cases). */
  successors: BlueprintEdge[];
  /** Incoming edges in definition order. */
  incoming: BlueprintEdge[];
  /** Distinct sources of `incoming`, in definition order. */
  predecessors: string[];
  /** For a DO_WHILE: its body, in definition order. Empty otherwise. */
  children: string[];
  /** For a DO_WHILE: the body nodes no edge enters, where each iteration starts. Empty otherwise. */
  bodyEntries: string[];
  /**
   * The refs whose latest rows an evaluation touching this node must load,
   * sorted: the refs its expression fields read (NODE_TYPES `expressionFields`,
   * via `referencedRefs`), its predecessors (join readiness, dead paths), a
   * JOIN's `joinOn`/`defaultExclusiveJoinTask`, and for a DO_WHILE its body
   * (the condition and the iteration-end check). Not the node itself:
   * `refsToLoad` adds that.
   */
  reads: string[];
  /**
   * True when decide can resolve this node within the evaluation that reaches
   * it (NOOP, SWITCH, JOIN, EXCLUSIVE_JOIN, SET_VARIABLE, TERMINATE, WAIT,
   * DO_WHILE, FORK_JOIN_DYNAMIC), so the evaluation may go on to its successors.
   * (A FORK_JOIN_DYNAMIC resolves on the spot only with zero instances or a bad
   * task list; one with instances ends through the shell's `aggregateForkOutput`
   * and its successors are decided in the evaluation after.)
   */
  resolvesInDecide: boolean;
  optional: boolean;
  /** The node's policy over the registered task definition's over Conductor's defaults (`effectiveTaskPolicy`). */
  policy: EffectiveTaskPolicy;
  /** The node's `input` template, or null. */
  input: Record<string, unknown> | null;
  /**
   * Type-specific configuration: the node without its common fields (ref,
   * type, name, label, description, position, parent, input, policy,
   * optional), e.g. `{ cases, evaluatorType, expression }` for a SWITCH.
   */
  config: Record<string, unknown>;
}

/** A compiled workflow definition. */
export interface Blueprint {
  blueprintVersion: typeof BLUEPRINT_VERSION;
  name: string;
  /** The definition's version, or null when compiled before one was assigned. */
  version: number | null;
  /** Top-level nodes no edge enters, in definition order. */
  startNodes: string[];
  /**
   * Every node by ref, in definition order. Look nodes up with
   * `blueprintNode()`: a ref may be `constructor` or `__proto__`, and a plain
   * `nodes[ref]` would read Object.prototype.
   */
  nodes: Record<string, BlueprintNode>;
  /** The workflow's outputParameters template, or null (then the output is the last task's, as in Conductor). */
  outputParameters: Record<string, unknown> | null;
  /** Refs the outputParameters read, sorted. */
  outputReads: string[];
  /** 0: no timeout. */
  timeoutSeconds: number;
  timeoutPolicy: (typeof WORKFLOW_TIMEOUT_POLICIES)[number];
  failureWorkflow: string | null;
}
