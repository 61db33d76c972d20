import { NOTE_SIZE_LIMITS } from "@/engine";
import type { NoteColor, Position, WorkflowDefinition, WorkflowNote } from "@/engine";

/**
 * Edits of a definition's sticky notes and pinned outputs — the parts the
 * engine ignores — as pure functions like `graph-edits.ts`.
 * A note's canvas id is `note:<id>`: a ref may not hold `:`, so the two never
 * collide in React Flow's one id space.
 */

const NOTE_PREFIX = "note:";

/** The React Flow id of a note. */
export function noteFlowId(id: string): string {
  return `${NOTE_PREFIX}${id}`;
}

/** The note id behind a React Flow id, or null for a workflow node's id. */
export function noteIdOf(flowId: string): string | null {
  return flowId.startsWith(NOTE_PREFIX) ? flowId.slice(NOTE_PREFIX.length) : null;
}

/** A note id the definition does not use yet: note_1, note_2, … */
export function freshNoteId(definition: WorkflowDefinition): string {
  const used = new Set((definition.notes ?? []).map((n) => n.id));
  let k = 1;
  while (used.has(`note_${k}`)) k++;
  return `note_${k}`;
}

/** Adds an empty-ish note at `position`; returns the definition and the new id. */
export function addNote(definition: WorkflowDefinition, position: Position, text = ""): { definition: WorkflowDefinition; id: string } {
  const id = freshNoteId(definition);
  const note: WorkflowNote = { id, text, position, width: NOTE_SIZE_LIMITS.defaultWidth, height: NOTE_SIZE_LIMITS.defaultHeight };
  return { definition: { ...definition, notes: [...(definition.notes ?? []), note] }, id };
}

/** What an edit may change on a note. */
export type NotePatch = Partial<Pick<WorkflowNote, "text" | "position" | "width" | "height">> & { color?: NoteColor };

const clamp = (v: number, min: number): number => Math.round(Math.min(NOTE_SIZE_LIMITS.max, Math.max(min, v)));

/** Changes one note; sizes are clamped to what the schema accepts. Unknown id or no change: the same definition. */
export function updateNote(definition: WorkflowDefinition, id: string, patch: NotePatch): WorkflowDefinition {
  const notes = definition.notes ?? [];
  let changed = false;
  const next = notes.map((n) => {
    if (n.id !== id) return n;
    const out: WorkflowNote = { ...n, ...patch };
    if (patch.width !== undefined) out.width = clamp(patch.width, NOTE_SIZE_LIMITS.minWidth);
    if (patch.height !== undefined) out.height = clamp(patch.height, NOTE_SIZE_LIMITS.minHeight);
    // Yellow is the default: leave it unwritten, so a note never coloured and one set back compare equal.
    if (out.color === "yellow") delete out.color;
    changed = JSON.stringify(out) !== JSON.stringify(n);
    return changed ? out : n;
  });
  return changed ? { ...definition, notes: next } : definition;
}

/** Moves notes; positions for ids without a note are ignored. */
export function moveNotes(definition: WorkflowDefinition, positions: ReadonlyMap<string, Position>): WorkflowDefinition {
  const notes = definition.notes ?? [];
  if (!notes.some((n) => positions.has(n.id))) return definition;
  return { ...definition, notes: notes.map((n) => (positions.has(n.id) ? { ...n, position: positions.get(n.id)! } : n)) };
}

/** Removes notes by id; the `notes` key goes away with the last one. */
export function removeNotes(definition: WorkflowDefinition, ids: ReadonlySet<string>): WorkflowDefinition {
  const notes = definition.notes ?? [];
  const kept = notes.filter((n) => !ids.has(n.id));
  if (kept.length === notes.length) return definition;
  if (kept.length > 0) return { ...definition, notes: kept };
  const { notes: _dropped, ...rest } = definition;
  return rest;
}

/**
 * Pins (a node's pinned output, test data the engine ignores) follow their
 * node: set or cleared here, dropped with the node, renamed with its ref.
 */
export function setPin(definition: WorkflowDefinition, ref: string, output: Record<string, unknown> | null): WorkflowDefinition {
  const pins = { ...definition.pins };
  if (output === null) {
    if (!Object.hasOwn(pins, ref)) return definition;
    delete pins[ref];
  } else {
    pins[ref] = output;
  }
  if (Object.keys(pins).length > 0) return { ...definition, pins };
  const { pins: _dropped, ...rest } = definition;
  return rest;
}

/** Drops pins whose node is gone, and moves a renamed node's pin (`renamed`: old ref → new ref). */
export function reconcilePins(definition: WorkflowDefinition, renamed?: { from: string; to: string }): WorkflowDefinition {
  if (definition.pins === undefined) return definition;
  const refs = new Set(definition.nodes.map((n) => n.ref));
  const pins: Record<string, Record<string, unknown>> = {};
  let changed = false;
  for (const [ref, output] of Object.entries(definition.pins)) {
    const to = renamed !== undefined && ref === renamed.from ? renamed.to : ref;
    if (to !== ref) changed = true;
    if (refs.has(to)) pins[to] = output;
    else changed = true;
  }
  if (!changed) return definition;
  if (Object.keys(pins).length > 0) return { ...definition, pins };
  const { pins: _dropped, ...rest } = definition;
  return rest;
}
