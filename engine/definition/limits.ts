/**
 * Bounds that keep validating a hostile definition cheap. Every check in
 * `validateDefinition` is linear in the size of what it is allowed to look at,
 * so these numbers bound its time and memory; anything beyond them is refused
 * with a structured problem before the expensive parts run.
 */
export interface DefinitionLimits {
  /**
   * Nodes per definition (inline sub-workflows count separately). 50,000: the
   * engine's benchmark runs a 30,000-task workflow, so the bound must clear
   * that with room, while a canvas stops being usable long before it. At
   * ~300 bytes a node the definition row is then ~15 MB of JSONB, about the
   * largest single value worth reading on every blueprint-cache miss.
   */
  readonly maxNodes: number;
  /** Edges per definition: twice the node bound, enough for every node to both fork and join. */
  readonly maxEdges: number;
  /**
   * Characters in any one string, object key included. 256 KiB: the size at
   * which a run's payload is offloaded to the blob store. A literal larger
   * than an offloaded payload belongs in the workflow's input, not its
   * definition.
   */
  readonly maxStringLength: number;
  /**
   * JSON nesting, counted from the definition's root (an input value on a
   * node starts at depth 4). 64 leaves room for any real JSON Schema or
   * request body, and keeps every recursive consumer far from the stack limit.
   */
  readonly maxDepth: number;
  /**
   * JSON values (objects, arrays and scalars) in the whole definition: about
   * 40 per node at the node bound. Also what stops a shared-reference object
   * graph built in memory (not expressible in JSON) from costing exponential time.
   */
  readonly maxValues: number;
  /** Inline sub-workflows nested inside each other. */
  readonly maxInlineDepth: number;
}

/** The limits `validateDefinition` applies unless told otherwise. */
export const DEFINITION_LIMITS: DefinitionLimits = Object.freeze({
  maxNodes: 50_000,
  maxEdges: 100_000,
  maxStringLength: 256 * 1024,
  maxDepth: 64,
  maxValues: 2_000_000,
  maxInlineDepth: 8,
});

/** Longest node ref. Refs end up in task rows, queue names and expressions, so they stay short. */
export const MAX_REF_LENGTH = 128;

/** Longest workflow, task or queue name. */
export const MAX_NAME_LENGTH = 256;

/** Sticky notes per definition: far more than a readable canvas holds, few enough to keep the row small. */
export const MAX_NOTES = 200;

/** Characters of markdown in one note: about four pages of text. */
export const MAX_NOTE_TEXT_LENGTH = 10_000;

/** A note's size bounds on the canvas, in canvas pixels. */
export const NOTE_SIZE_LIMITS = Object.freeze({ minWidth: 120, minHeight: 60, max: 4000, defaultWidth: 240, defaultHeight: 160 });

/** Pinned outputs per definition (one per node at most; the definition's size limits bound their contents). */
export const MAX_PINS = 500;
