import { LAYOUT_DEFAULTS } from "@/engine";
import type { EditorActions, EditorState } from "./editor-store";
import { loopAt, overviewLayout } from "./overview-geometry";

/**
 * After a node is dragged (on React Flow's nodes or on the far-zoom
 * overview): dropped with its centre over a loop's body, it moves into that
 * loop; dragged out of its loop, it leaves it. Loops themselves never change
 * parent by dragging. The store coalesces this into the drag's undo step.
 */
export function dropIntoLoop(s: EditorState & EditorActions, ref: string): void {
  const layout = overviewLayout(s.definition, s.measured);
  const box = layout.byRef.get(ref);
  if (!box || box.isLoop) return;
  const centre = { x: box.x + LAYOUT_DEFAULTS.nodeWidth / 2, y: box.y + LAYOUT_DEFAULTS.nodeHeight / 2 };
  const loop = loopAt(layout, centre, ref);
  const current = box.node.parent;
  if (loop && loop.ref !== current) {
    const origin = layout.byRef.get(loop.ref)!;
    s.reparent(ref, loop.ref, { x: box.x - origin.x, y: box.y - origin.y });
  } else if (!loop && current !== undefined) {
    s.reparent(ref, undefined, { x: box.x, y: box.y });
  }
}
