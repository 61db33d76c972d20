"use client";

import { useEffect, useRef } from "react";
import type { EditorStore } from "./editor-store";
import { parseFragment } from "./graph-edits";
import { shortcutFor } from "./shortcuts";
import type { ShortcutAction } from "./shortcuts";

/** True when the event belongs to a text field (inspector input, CodeMirror): the keys are the field's. */
function inTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target.closest("input, textarea, select, [contenteditable='true'], .cm-editor") !== null;
}

/** Any dialog open: its keys are its own. */
function dialogOpen(): boolean {
  return document.querySelector("[role='dialog'], [role='alertdialog']") !== null;
}

export function isMac(): boolean {
  return typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);
}

/**
 * The editor's keyboard: shortcuts (shortcuts.ts) on keydown, and copy, cut
 * and paste through the browser's own clipboard events — they need no
 * permission prompt and reach across tabs, which is how a selection copied in
 * one workflow pastes into another. `other` gets the actions the store does
 * not own (save, layout, fit, view switch, help).
 */
export function useEditorKeys(store: EditorStore, other: (action: ShortcutAction) => void): void {
  const handler = useRef(other);
  useEffect(() => {
    handler.current = other;
  });

  useEffect(() => {
    const mac = isMac();
    /** Paste lands where it was copied, nudged, so the copy never hides the original. */
    let pasteCount = 0;

    const onKeyDown = (event: KeyboardEvent) => {
      const action = shortcutFor(event, mac);
      if (!action) return;
      // Save works from inside a field too; everything else leaves fields alone.
      if (action !== "save" && (inTextField(event.target) || dialogOpen())) return;
      // Copy, cut and paste are left to their clipboard events below.
      if (action === "copy" || action === "cut" || action === "paste") return;
      event.preventDefault();
      const s = store.getState();
      switch (action) {
        case "undo":
          s.undo();
          break;
        case "redo":
          s.redo();
          break;
        case "delete":
          s.deleteSelection();
          break;
        case "duplicate":
          s.duplicateSelection();
          break;
        case "selectAll":
          s.select(s.definition.nodes.map((n) => n.ref));
          break;
        case "deselect":
          s.select([]);
          break;
        default:
          handler.current(action);
      }
    };

    const onCopy = (event: ClipboardEvent, cut: boolean) => {
      if (inTextField(event.target) || dialogOpen()) return;
      const s = store.getState();
      const fragment = s.copySelection();
      if (!fragment || !event.clipboardData) return;
      event.preventDefault();
      event.clipboardData.setData("text/plain", JSON.stringify(fragment, null, 2));
      pasteCount = 0;
      if (cut) s.deleteSelection();
    };

    const onPaste = (event: ClipboardEvent) => {
      if (inTextField(event.target) || dialogOpen()) return;
      const fragment = parseFragment(event.clipboardData?.getData("text/plain") ?? "");
      if (!fragment) return;
      event.preventDefault();
      pasteCount++;
      store.getState().paste(fragment, { x: 40 * pasteCount, y: 40 * pasteCount });
    };

    const copy = (e: ClipboardEvent) => onCopy(e, false);
    const cut = (e: ClipboardEvent) => onCopy(e, true);
    document.addEventListener("keydown", onKeyDown);
    document.addEventListener("copy", copy);
    document.addEventListener("cut", cut);
    document.addEventListener("paste", onPaste);
    return () => {
      document.removeEventListener("keydown", onKeyDown);
      document.removeEventListener("copy", copy);
      document.removeEventListener("cut", cut);
      document.removeEventListener("paste", onPaste);
    };
  }, [store]);
}
