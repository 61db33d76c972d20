"use client";

import { NodeResizer, NodeToolbar, Position } from "@xyflow/react";
import type { NodeProps, OnResize } from "@xyflow/react";
import { Pencil, Trash2 } from "lucide-react";
import { memo, useCallback, useRef, useState } from "react";
import type { KeyboardEvent, ReactNode } from "react";
import { MAX_NOTE_TEXT_LENGTH, NOTE_COLORS, NOTE_SIZE_LIMITS } from "@/engine";
import type { NoteColor } from "@/engine";
import { useEditorStore } from "../editor-context";
import type { NoteFlowNode } from "../flow-mapping";
import { noteFlowId } from "../note-edits";
import { parseNoteMarkdown } from "../note-markdown";
import type { Inline } from "../note-markdown";

/** Each colour's paper, light and dark. */
const PAPER: Readonly<Record<NoteColor, string>> = {
  yellow: "bg-amber-100 border-amber-300 dark:bg-amber-900/60 dark:border-amber-700",
  blue: "bg-sky-100 border-sky-300 dark:bg-sky-900/60 dark:border-sky-700",
  green: "bg-emerald-100 border-emerald-300 dark:bg-emerald-900/60 dark:border-emerald-700",
  pink: "bg-pink-100 border-pink-300 dark:bg-pink-900/60 dark:border-pink-700",
  purple: "bg-violet-100 border-violet-300 dark:bg-violet-900/60 dark:border-violet-700",
  gray: "bg-zinc-100 border-zinc-300 dark:bg-zinc-800 dark:border-zinc-600",
};

function InlineContent({ items }: { items: readonly Inline[] }): ReactNode {
  return items.map((item, i) => {
    switch (item.kind) {
      case "text":
        return <span key={i}>{item.text}</span>;
      case "strong":
        return (
          <strong key={i}>
            <InlineContent items={item.children} />
          </strong>
        );
      case "em":
        return (
          <em key={i}>
            <InlineContent items={item.children} />
          </em>
        );
      case "code":
        return (
          <code className="rounded bg-black/10 px-1 font-mono text-[0.9em] dark:bg-white/10" key={i}>
            {item.text}
          </code>
        );
      case "link":
        return (
          <a className="nodrag text-accent underline" href={item.href} key={i} rel="noopener noreferrer" target="_blank">
            <InlineContent items={item.children} />
          </a>
        );
    }
  });
}

/** A note's text as React elements (note-markdown.ts): never HTML. */
export function NoteMarkdown({ text }: { text: string }) {
  const blocks = parseNoteMarkdown(text);
  if (blocks.length === 0) return <p className="text-muted italic">Double-click to write a note</p>;
  return blocks.map((block, i) => {
    if (block.kind === "heading") {
      const size = block.level === 1 ? "text-base font-semibold" : block.level === 2 ? "text-sm font-semibold" : "text-sm font-medium";
      return (
        <p className={size} key={i} role="heading" aria-level={block.level}>
          <InlineContent items={block.children} />
        </p>
      );
    }
    if (block.kind === "list") {
      const items = block.items.map((item, k) => (
        <li key={k}>
          <InlineContent items={item} />
        </li>
      ));
      return block.ordered ? (
        <ol className="ml-4 list-decimal" key={i}>
          {items}
        </ol>
      ) : (
        <ul className="ml-4 list-disc" key={i}>
          {items}
        </ul>
      );
    }
    return (
      <p key={i}>
        <InlineContent items={block.children} />
      </p>
    );
  });
}

let resizeSessions = 0;

/** A sticky note on the canvas: markdown, a colour, resizable; double-click edits the text. */
export const NoteNode = memo(function NoteNode({ data, selected }: NodeProps<NoteFlowNode>) {
  const { note, readOnly } = data;
  const store = useEditorStore();
  const [editing, setEditing] = useState(false);
  const resizeKey = useRef("");
  const color = note.color ?? "yellow";

  const onResizeStart = useCallback(() => {
    resizeKey.current = `${note.id}:resize:${++resizeSessions}`;
  }, [note.id]);
  const onResize: OnResize = useCallback(
    (_event, p) => store.getState().updateNote(note.id, { width: p.width, height: p.height, position: { x: Math.round(p.x), y: Math.round(p.y) } }, resizeKey.current),
    [note.id, store],
  );

  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // The editor's shortcuts (Delete, Ctrl+Z, …) are for the canvas, not for typing.
    e.stopPropagation();
    if (e.key === "Escape") setEditing(false);
  };

  return (
    <div
      aria-label={`Note ${note.id}`}
      className={`h-full w-full overflow-hidden rounded-lg border p-3 text-sm text-foreground shadow-sm ${PAPER[color]} ${selected ? "ring-2 ring-accent" : ""}`}
      data-note-color={color}
      data-testid="sticky-note"
      role="note"
      onDoubleClick={(e) => {
        if (readOnly) return;
        e.stopPropagation();
        setEditing(true);
      }}
    >
      {readOnly ? null : (
        <NodeResizer
          isVisible={selected}
          lineClassName="!border-accent"
          handleClassName="!size-2 !bg-accent"
          maxHeight={NOTE_SIZE_LIMITS.max}
          maxWidth={NOTE_SIZE_LIMITS.max}
          minHeight={NOTE_SIZE_LIMITS.minHeight}
          minWidth={NOTE_SIZE_LIMITS.minWidth}
          onResize={onResize}
          onResizeStart={onResizeStart}
        />
      )}
      {readOnly ? null : (
        <NodeToolbar isVisible={selected && !editing} position={Position.Top}>
          <div className="flex items-center gap-1 rounded-lg border border-separator bg-surface p-1 shadow" role="toolbar" aria-label="Note">
            {NOTE_COLORS.map((c) => (
              <button
                aria-label={`Colour ${c}`}
                aria-pressed={c === color}
                className={`size-5 rounded-full border ${PAPER[c]} ${c === color ? "ring-2 ring-accent" : ""}`}
                key={c}
                type="button"
                onClick={() => store.getState().updateNote(note.id, { color: c })}
              />
            ))}
            <button aria-label="Edit note" className="flex size-6 items-center justify-center rounded text-muted hover:bg-default hover:text-foreground" type="button" onClick={() => setEditing(true)}>
              <Pencil className="size-3.5" />
            </button>
            <button
              aria-label="Delete note"
              className="flex size-6 items-center justify-center rounded text-muted hover:bg-default hover:text-danger"
              type="button"
              onClick={() => store.getState().deleteElements([noteFlowId(note.id)], [])}
            >
              <Trash2 className="size-3.5" />
            </button>
          </div>
        </NodeToolbar>
      )}
      {editing ? (
        <textarea
          aria-label="Note text"
          autoFocus
          className="nodrag nowheel h-full w-full resize-none bg-transparent font-mono text-xs outline-none"
          maxLength={MAX_NOTE_TEXT_LENGTH}
          placeholder="Markdown: # heading, **bold**, *italic*, `code`, - list, [link](https://…)"
          value={note.text}
          onBlur={() => setEditing(false)}
          onChange={(e) => store.getState().updateNote(note.id, { text: e.target.value }, `${note.id}:text`)}
          onKeyDown={onKey}
        />
      ) : (
        <div className="flex flex-col gap-1.5 break-words">
          <NoteMarkdown text={note.text} />
        </div>
      )}
    </div>
  );
});
