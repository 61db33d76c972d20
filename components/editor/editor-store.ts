import { createStore } from "zustand/vanilla";
import { validateDefinition } from "@/engine";
import type { NodeType, Position, Problem, WorkflowDefinition, WorkflowNode } from "@/engine";
import * as edits from "./graph-edits";
import type { ConnectionRequest, GraphFragment } from "./graph-edits";
import * as noteEdits from "./note-edits";
import type { NotePatch } from "./note-edits";

/**
 * The editor's one store. `definition` is the single source of truth: the
 * canvas, the JSON view and the inspector all render from it and all edit it
 * through the actions below, so they cannot drift apart (Kestra's canvas and
 * YAML do). Everything else here — selection, measured sizes, history — is
 * about *viewing* the definition, never a second copy of it.
 *
 * Undo is one step per user action: a drag is one step however many frames it
 * took, typing into one inspector field is one step until another field (or
 * anything else) is touched, a paste of fifty nodes is one step.
 */

/** A past or future state, with what the user did to leave it. */
interface HistoryEntry {
  definition: WorkflowDefinition;
  label: string;
}

/** How a node differs from the version it is compared with. */
export type DiffKind = "added" | "removed" | "changed";

export interface EditorNotice {
  id: number;
  message: string;
  tone: "danger" | "warning" | "success";
}

export interface EditorState {
  definition: WorkflowDefinition;
  /** The definition as last loaded or saved: `definition !== saved` means unsaved changes. */
  saved: WorkflowDefinition;
  readOnly: boolean;
  problems: readonly Problem[];
  problemsByRef: ReadonlyMap<string, readonly Problem[]>;
  selectedNodes: ReadonlySet<string>;
  selectedEdges: ReadonlySet<string>;
  /** Sizes React Flow measured, fed back so a changed node keeps its handles without a re-measure. */
  measured: ReadonlyMap<string, { width: number; height: number }>;
  past: readonly HistoryEntry[];
  future: readonly HistoryEntry[];
  /** The field the last commit edited; a commit of the same field merges into it. */
  coalesceKey: string | null;
  /** The definition when the current drag began, or null when nothing is being dragged. */
  dragOrigin: WorkflowDefinition | null;
  /** In compare mode: how each node differs from the other version. */
  diff: ReadonlyMap<string, DiffKind> | null;
  notice: EditorNotice | null;
}

export interface EditorActions {
  /** Records `next` as one undoable step. Same `coalesceKey` as the previous commit: merged into it. */
  commit(next: WorkflowDefinition, label: string, coalesceKey?: string): void;
  undo(): void;
  redo(): void;
  select(nodes: Iterable<string>, edges?: Iterable<string>): void;
  /** Moves during a drag: the first call remembers where the drag began; `done` records the whole drag as one step. */
  moveNodes(positions: ReadonlyMap<string, Position>, done: boolean): void;
  setMeasured(sizes: ReadonlyMap<string, { width: number; height: number }>): void;
  addNode(type: NodeType, position: Position, parent?: string): string | null;
  /** Adds a sticky note and selects it; returns its id. */
  addNote(position: Position): string | null;
  /** Edits a note; the same `coalesceKey` as the previous commit merges (typing, one resize). */
  updateNote(id: string, patch: NotePatch, coalesceKey?: string): void;
  /** Pins a node's output for step tests (null unpins); typing into one pin is one undo step. */
  setPin(ref: string, output: Record<string, unknown> | null): void;
  insertOnEdge(edgeId: string, type: NodeType, position: Position): string | null;
  connect(request: ConnectionRequest): boolean;
  deleteSelection(): void;
  deleteElements(refs: Iterable<string>, edgeIds: Iterable<string>): void;
  copySelection(): GraphFragment | null;
  paste(fragment: GraphFragment, offset: Position): void;
  duplicateSelection(): void;
  updateNode(next: WorkflowNode, field: string): void;
  renameRef(from: string, to: string): string | null;
  renameCase(ref: string, from: string, to: string): string | null;
  addCase(ref: string): void;
  removeCase(ref: string, label: string): void;
  reparent(ref: string, parent: string | undefined, position: Position): boolean;
  /** Replaces the whole definition (JSON view, auto-layout) as one step. */
  replaceDefinition(next: WorkflowDefinition, label: string, coalesceKey?: string): void;
  markSaved(definition: WorkflowDefinition): void;
  setDiff(diff: ReadonlyMap<string, DiffKind> | null): void;
  notify(message: string, tone?: EditorNotice["tone"]): void;
  dismissNotice(): void;
}

export type EditorStore = ReturnType<typeof createEditorStore>;

/** History is bounded: structural sharing keeps entries small, but not free. */
const HISTORY_LIMIT = 200;

/** Errors first, then warnings (severity "warning": saved anyway, shown on the node in their own colour). */
function validate(definition: WorkflowDefinition): Pick<EditorState, "problems" | "problemsByRef"> {
  const result = validateDefinition(definition);
  const problems = [...(result.ok ? [] : result.problems), ...result.warnings];
  const byRef = new Map<string, Problem[]>();
  for (const p of problems) {
    for (const ref of p.refs ?? (p.ref === undefined ? [] : [p.ref])) {
      const list = byRef.get(ref);
      if (list) list.push(p);
      else byRef.set(ref, [p]);
    }
  }
  return { problems, problemsByRef: byRef };
}

let noticeIds = 0;
let dragIds = 0;

export function createEditorStore(initial: { definition: WorkflowDefinition; readOnly?: boolean; saved?: WorkflowDefinition }) {
  return createStore<EditorState & EditorActions>()((set, get) => {
    /** Applies a new definition as the current one, keeping what is still selectable selected. */
    const apply = (next: WorkflowDefinition, patch: Partial<EditorState> = {}) => {
      const refs = new Set(next.nodes.map((n) => n.ref));
      // Selected sticky notes sit in selectedNodes under their canvas ids (note-edits.ts).
      for (const n of next.notes ?? []) refs.add(noteEdits.noteFlowId(n.id));
      const edgeIds = new Set(next.edges.map(edits.edgeKey));
      const s = get();
      const selectedNodes = patch.selectedNodes ?? new Set([...s.selectedNodes].filter((r) => refs.has(r)));
      const selectedEdges = patch.selectedEdges ?? new Set([...s.selectedEdges].filter((e) => edgeIds.has(e)));
      set({ ...patch, definition: next, selectedNodes, selectedEdges, ...validate(next) });
    };

    const commit = (next: WorkflowDefinition, label: string, coalesceKey?: string, patch: Partial<EditorState> = {}) => {
      const s = get();
      if (s.readOnly || next === s.definition) return;
      const merge = coalesceKey !== undefined && coalesceKey === s.coalesceKey && s.past.length > 0;
      const past = merge ? s.past : [...s.past, { definition: s.definition, label }].slice(-HISTORY_LIMIT);
      apply(next, { ...patch, past, future: [], coalesceKey: coalesceKey ?? null });
    };

    const refuse = (reason: string) => {
      get().notify(reason, "warning");
    };

    return {
      definition: initial.definition,
      saved: initial.saved ?? initial.definition,
      readOnly: initial.readOnly ?? false,
      ...validate(initial.definition),
      selectedNodes: new Set(),
      selectedEdges: new Set(),
      measured: new Map(),
      past: [],
      future: [],
      coalesceKey: null,
      dragOrigin: null,
      diff: null,
      notice: null,

      commit,

      undo() {
        const s = get();
        const entry = s.past.at(-1);
        if (!entry || s.readOnly) return;
        apply(entry.definition, {
          past: s.past.slice(0, -1),
          future: [...s.future, { definition: s.definition, label: entry.label }],
          coalesceKey: null,
        });
      },

      redo() {
        const s = get();
        const entry = s.future.at(-1);
        if (!entry || s.readOnly) return;
        apply(entry.definition, {
          future: s.future.slice(0, -1),
          past: [...s.past, { definition: s.definition, label: entry.label }],
          coalesceKey: null,
        });
      },

      select(nodes, edgeIds = []) {
        set({ selectedNodes: new Set(nodes), selectedEdges: new Set(edgeIds), coalesceKey: null });
      },

      moveNodes(positions, done) {
        const s = get();
        if (s.readOnly) return;
        const origin = s.dragOrigin ?? s.definition;
        // Positions never change what the validator says, so a drag frame skips it.
        const nodePositions = new Map<string, Position>();
        const notePositions = new Map<string, Position>();
        for (const [id, p] of positions) {
          const noteId = noteEdits.noteIdOf(id);
          if (noteId === null) nodePositions.set(id, p);
          else notePositions.set(noteId, { x: Math.round(p.x), y: Math.round(p.y) });
        }
        const next = noteEdits.moveNotes(edits.setPositions(s.definition, nodePositions), notePositions);
        if (!done) {
          set({ definition: next, dragOrigin: origin });
          return;
        }
        if (next === origin) {
          set({ dragOrigin: null });
          return;
        }
        set({
          definition: next,
          dragOrigin: null,
          past: [...s.past, { definition: origin, label: "Move" }].slice(-HISTORY_LIMIT),
          future: [],
          // A drop into a loop right after (reparent) belongs to this same step.
          coalesceKey: `drag:${++dragIds}`,
        });
      },

      setMeasured(sizes) {
        const measured = new Map(get().measured);
        for (const [ref, size] of sizes) measured.set(ref, size);
        set({ measured });
      },

      addNode(type, position, parent) {
        const s = get();
        if (s.readOnly) return null;
        const { definition, ref } = edits.addNode(s.definition, type, position, parent);
        commit(definition, "Add node", undefined, { selectedNodes: new Set([ref]), selectedEdges: new Set() });
        return ref;
      },

      addNote(position) {
        const s = get();
        if (s.readOnly) return null;
        const { definition, id } = noteEdits.addNote(s.definition, { x: Math.round(position.x), y: Math.round(position.y) });
        commit(definition, "Add note", undefined, { selectedNodes: new Set([noteEdits.noteFlowId(id)]), selectedEdges: new Set() });
        return id;
      },

      setPin(ref, output) {
        commit(noteEdits.setPin(get().definition, ref, output), output === null ? "Unpin output" : "Pin output", `pin:${ref}`);
      },

      updateNote(id, patch, coalesceKey) {
        commit(noteEdits.updateNote(get().definition, id, patch), "Edit note", coalesceKey);
      },

      insertOnEdge(edgeId, type, position) {
        const s = get();
        if (s.readOnly) return null;
        const result = edits.insertOnEdge(s.definition, edgeId, type, position);
        if ("reason" in result) {
          refuse(result.reason);
          return null;
        }
        commit(result.definition, "Insert node", undefined, { selectedNodes: new Set([result.ref]), selectedEdges: new Set() });
        return result.ref;
      },

      connect(request) {
        const s = get();
        if (s.readOnly) return false;
        const result = edits.connect(s.definition, request);
        if ("reason" in result) {
          refuse(result.reason);
          return false;
        }
        commit(result.definition, "Connect");
        return true;
      },

      deleteSelection() {
        const s = get();
        get().deleteElements(s.selectedNodes, s.selectedEdges);
      },

      deleteElements(ids, edgeIds) {
        const s = get();
        const refs: string[] = [];
        const notes = new Set<string>();
        for (const id of ids) {
          const noteId = noteEdits.noteIdOf(id);
          if (noteId === null) refs.push(id);
          else notes.add(noteId);
        }
        const next = noteEdits.reconcilePins(noteEdits.removeNotes(edits.removeElements(s.definition, refs, edgeIds), notes));
        commit(next, "Delete", undefined, { selectedNodes: new Set(), selectedEdges: new Set() });
      },

      copySelection() {
        const s = get();
        return edits.copyFragment(s.definition, s.selectedNodes);
      },

      paste(fragment, offset) {
        const s = get();
        if (s.readOnly) return;
        const { definition, refs } = edits.pasteFragment(s.definition, fragment, offset);
        commit(definition, "Paste", undefined, { selectedNodes: new Set(refs), selectedEdges: new Set() });
      },

      duplicateSelection() {
        const fragment = get().copySelection();
        if (fragment) get().paste(fragment, { x: 40, y: 40 });
      },

      updateNode(next, field) {
        commit(edits.replaceNode(get().definition, next), "Edit", `${next.ref}:${field}`);
      },

      renameRef(from, to) {
        const s = get();
        const result = edits.renameRef(s.definition, from, to);
        if ("reason" in result) return result.reason;
        const selectedNodes = new Set([...s.selectedNodes].map((r) => (r === from ? to : r)));
        commit(noteEdits.reconcilePins(result.definition, { from, to }), "Rename", undefined, { selectedNodes });
        return null;
      },

      renameCase(ref, from, to) {
        const result = edits.renameCase(get().definition, ref, from, to);
        if ("reason" in result) return result.reason;
        commit(result.definition, "Rename case");
        return null;
      },

      addCase(ref) {
        commit(edits.addCase(get().definition, ref), "Add case");
      },

      removeCase(ref, label) {
        commit(edits.removeCase(get().definition, ref, label), "Remove case");
      },

      reparent(ref, parent, position) {
        const result = edits.reparent(get().definition, ref, parent, position);
        if ("reason" in result) {
          refuse(result.reason);
          return false;
        }
        const key = get().coalesceKey;
        commit(result.definition, parent === undefined ? "Move out of loop" : "Move into loop", key?.startsWith("drag:") ? key : undefined);
        return true;
      },

      replaceDefinition(next, label, coalesceKey) {
        commit(next, label, coalesceKey);
      },

      markSaved(definition) {
        // The saved definition becomes current (it carries its new version);
        // history stays, so a save can still be undone into a new draft.
        apply(definition, { saved: definition, coalesceKey: null });
      },

      setDiff(diff) {
        set({ diff });
      },

      notify(message, tone = "warning") {
        set({ notice: { id: ++noticeIds, message, tone } });
      },

      dismissNotice() {
        set({ notice: null });
      },
    };
  });
}
