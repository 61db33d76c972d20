"use client";

import { createContext, useContext, useState } from "react";
import type { ReactNode } from "react";
import { useStore } from "zustand";
import type { WorkflowDefinition } from "@/engine";
import { createEditorStore } from "./editor-store";
import type { EditorActions, EditorState, EditorStore } from "./editor-store";

const EditorStoreContext = createContext<EditorStore | null>(null);

/** One store per editor page: two editors (say, a compare view) never share state. */
export function EditorStoreProvider({
  definition,
  readOnly,
  children,
}: {
  definition: WorkflowDefinition;
  readOnly?: boolean;
  children: ReactNode;
}) {
  const [store] = useState(() => createEditorStore({ definition, readOnly }));
  return <EditorStoreContext.Provider value={store}>{children}</EditorStoreContext.Provider>;
}

/** The store itself, for event handlers that read state once instead of subscribing. */
export function useEditorStore(): EditorStore {
  const store = useContext(EditorStoreContext);
  if (!store) throw new Error("useEditor must be used inside <EditorStoreProvider>");
  return store;
}

/** Subscribes to one slice: a component re-renders only when its slice changes. */
export function useEditor<T>(selector: (state: EditorState & EditorActions) => T): T {
  return useStore(useEditorStore(), selector);
}
