/**
 * The editor's keyboard shortcuts: one list drives both the key handler and
 * the help dialog, so the dialog can never list a shortcut that does not work.
 */

export type ShortcutAction =
  | "undo"
  | "redo"
  | "delete"
  | "copy"
  | "cut"
  | "paste"
  | "duplicate"
  | "selectAll"
  | "save"
  | "layout"
  | "fitView"
  | "toggleJson"
  | "help"
  | "deselect";

export interface Shortcut {
  action: ShortcutAction;
  /** As shown in the help dialog; `Mod` is ⌘ on a Mac and Ctrl elsewhere. */
  keys: string[];
  description: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { action: "undo", keys: ["Mod+Z"], description: "Undo the last change" },
  { action: "redo", keys: ["Mod+Shift+Z", "Mod+Y"], description: "Redo" },
  { action: "delete", keys: ["Delete", "Backspace"], description: "Delete the selected nodes and edges" },
  { action: "copy", keys: ["Mod+C"], description: "Copy the selection (paste it in any node-flow tab)" },
  { action: "cut", keys: ["Mod+X"], description: "Cut the selection" },
  { action: "paste", keys: ["Mod+V"], description: "Paste" },
  { action: "duplicate", keys: ["Mod+D"], description: "Duplicate the selection" },
  { action: "selectAll", keys: ["Mod+A"], description: "Select every node" },
  { action: "save", keys: ["Mod+S"], description: "Save a new version" },
  { action: "layout", keys: ["Shift+L"], description: "Tidy the diagram (auto-layout)" },
  { action: "fitView", keys: ["Shift+F"], description: "Fit the whole diagram in view" },
  { action: "toggleJson", keys: ["Shift+J"], description: "Switch between the diagram and the JSON view" },
  { action: "help", keys: ["?"], description: "Show these shortcuts" },
  { action: "deselect", keys: ["Escape"], description: "Clear the selection" },
];

/** Pointer gestures, listed in the help dialog beside the keys. */
export const GESTURES: readonly { gesture: string; description: string }[] = [
  { gesture: "Drag from the palette", description: "Add a node; drop it on an edge to insert it there, or inside a loop to add it to the body" },
  { gesture: "Drag handle to handle", description: "Connect two nodes (a Switch connects from a case handle)" },
  { gesture: "Shift+drag on the canvas", description: "Select everything in a box" },
  { gesture: "Shift+click", description: "Add a node or edge to the selection" },
  { gesture: "Double-click a case label", description: "Rename a Switch case on the node" },
  { gesture: "Scroll / pinch", description: "Zoom; drag the canvas to pan" },
];

/** Which action a key event means, or null. `mac` picks ⌘ over Ctrl. */
export function shortcutFor(event: { key: string; metaKey: boolean; ctrlKey: boolean; shiftKey: boolean; altKey: boolean }, mac: boolean): ShortcutAction | null {
  const mod = mac ? event.metaKey : event.ctrlKey;
  if (event.altKey) return null;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  if (mod) {
    if (key === "z") return event.shiftKey ? "redo" : "undo";
    if (key === "y" && !event.shiftKey) return "redo";
    if (event.shiftKey) return null;
    return ({ c: "copy", x: "cut", v: "paste", d: "duplicate", a: "selectAll", s: "save" } as const)[key as "c"] ?? null;
  }
  if (event.metaKey || event.ctrlKey) return null;
  if (key === "Delete" || key === "Backspace") return "delete";
  if (key === "Escape") return "deselect";
  if (event.key === "?") return "help";
  if (event.shiftKey) return ({ l: "layout", f: "fitView", j: "toggleJson" } as const)[key as "l"] ?? null;
  return null;
}
