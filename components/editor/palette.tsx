"use client";

import { SearchField } from "@heroui/react";
import { memo, useMemo, useState } from "react";
import type { DragEvent } from "react";
import { NODE_CATEGORIES, NODE_TYPE_LIST } from "@/engine";
import type { NodeCategory, NodeType } from "@/engine";
import { NodeIconTile } from "./nodes/node-icon";

/** The drag payload's type: the canvas accepts only drags carrying it. */
export const PALETTE_MIME = "application/x-node-flow-type";

/**
 * Every node type, grouped, each with its icon and one line. Drag one onto
 * the canvas (or onto an edge to insert it there), or press it to add it at
 * the centre of the view — the keyboard path to the same thing.
 */
export const Palette = memo(function Palette({ onAdd, disabled }: { onAdd: (type: NodeType) => void; disabled: boolean }) {
  const [filter, setFilter] = useState("");
  const groups = useMemo(() => {
    const term = filter.trim().toLowerCase();
    const matches = NODE_TYPE_LIST.filter(
      (t) => !term || t.label.toLowerCase().includes(term) || t.type.toLowerCase().includes(term) || t.description.toLowerCase().includes(term),
    );
    return (Object.keys(NODE_CATEGORIES) as NodeCategory[])
      .map((category) => ({ category, items: matches.filter((t) => t.category === category) }))
      .filter((g) => g.items.length > 0);
  }, [filter]);

  const onDragStart = (event: DragEvent<HTMLButtonElement>, type: NodeType) => {
    event.dataTransfer.setData(PALETTE_MIME, type);
    event.dataTransfer.setData("text/plain", type);
    event.dataTransfer.effectAllowed = "copy";
  };

  return (
    <nav aria-label="Node palette" className="flex h-full min-h-0 flex-col">
      <div className="p-3">
        <SearchField aria-label="Filter node types" value={filter} onChange={setFilter}>
          <SearchField.Group>
            <SearchField.SearchIcon />
            <SearchField.Input placeholder="Find a node type" />
            <SearchField.ClearButton />
          </SearchField.Group>
        </SearchField>
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto px-2 pb-3">
        {groups.map(({ category, items }) => (
          <section key={category} aria-label={NODE_CATEGORIES[category]} className="mb-3">
            <h3 className="px-2 pb-1 text-[11px] font-semibold tracking-wide text-muted uppercase">{NODE_CATEGORIES[category]}</h3>
            <ul className="flex flex-col gap-0.5">
              {items.map((t) => (
                <li key={t.type}>
                  <button
                    aria-label={`Add ${t.label}`}
                    className="flex w-full cursor-grab items-center gap-2.5 rounded-lg px-2 py-1.5 text-left hover:bg-default focus-visible:ring-2 focus-visible:ring-focus focus-visible:outline-none active:cursor-grabbing disabled:cursor-not-allowed disabled:opacity-50"
                    data-node-type={t.type}
                    disabled={disabled}
                    draggable={!disabled}
                    title={t.description}
                    type="button"
                    onClick={() => onAdd(t.type)}
                    onDragStart={(e) => onDragStart(e, t.type)}
                  >
                    <NodeIconTile size="sm" type={t.type} />
                    <span className="flex min-w-0 flex-col leading-tight">
                      <span className="truncate text-sm font-medium text-foreground">{t.label}</span>
                      <span className="line-clamp-2 text-xs text-muted">{t.description}</span>
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        ))}
        {groups.length === 0 ? <p className="px-2 text-sm text-muted">No node type matches “{filter}”.</p> : null}
      </div>
    </nav>
  );
});
