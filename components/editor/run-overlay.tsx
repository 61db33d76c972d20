"use client";

import { createContext, useContext } from "react";
import { useStore } from "zustand";
import type { StoreApi } from "zustand";
import type { TaskStatus } from "@/engine";

/**
 * A run's state drawn over the diagram. Kept in its own store, keyed by ref,
 * apart from the editor's: one live event changes one entry and re-renders
 * one node, never the canvas. Outside an execution page there is no
 * provider and every node draws as it does in the editor.
 */

/** What a node shows of its run. */
export interface NodeRunState {
  /** The status of the attempt shown (the latest, in the iteration picked). */
  status: TaskStatus;
  /** Attempts of this ref in that iteration (retries are new attempts). */
  attempts: number;
  startedAt: string | null;
  endedAt: string | null;
  /** For a dynamic fork: its instances, and how many have ended. */
  instances?: { total: number; ended: number };
  /** For a loop: the iterations run so far. */
  iterations?: number;
  /** For an agent: the turn it is on (or ended in). */
  turns?: number;
  /** In the editor's test run: the node's pin answered for it (it was not executed). */
  pinned?: boolean;
}

export interface RunOverlayState {
  nodes: ReadonlyMap<string, NodeRunState>;
  /** Edges whose both ends ran: the path taken. Keyed as the canvas keys edges. */
  takenEdges: ReadonlySet<string>;
  /** Per loop ref, the iteration the body shows (1-based); absent means the latest. */
  iteration: ReadonlyMap<string, number>;
  setIteration(loop: string, iteration: number): void;
  /** The ref whose task panel is open. */
  selected: string | null;
}

export const RunOverlayContext = createContext<StoreApi<RunOverlayState> | null>(null);

const NONE = (): null => null;

/** The run state of one node, or null in the editor (no run) and for a node that has not run. */
export function useNodeRunState(ref: string): NodeRunState | null {
  const store = useContext(RunOverlayContext);
  // The hook runs unconditionally; without a provider it subscribes to nothing.
  return useStore(store ?? NULL_STORE, store ? (s: RunOverlayState) => s.nodes.get(ref) ?? null : NONE);
}

/** Whether an edge lies on the path the run took; false outside a run. */
export function useEdgeTaken(id: string): boolean | null {
  const store = useContext(RunOverlayContext);
  return useStore(store ?? NULL_STORE, store ? (s: RunOverlayState) => s.takenEdges.has(id) : NONE);
}

/** The iteration picker of a loop, or null outside a run. */
export function useLoopIteration(ref: string): { current: number | null; total: number; pick: (n: number) => void } | null {
  const store = useContext(RunOverlayContext);
  const current = useStore(store ?? NULL_STORE, store ? (s: RunOverlayState) => s.iteration.get(ref) ?? null : NONE);
  const total = useStore(store ?? NULL_STORE, store ? (s: RunOverlayState) => s.nodes.get(ref)?.iterations ?? 0 : NONE);
  if (!store) return null;
  return { current, total: total ?? 0, pick: (n) => store.getState().setIteration(ref, n) };
}

const NULL_STORE: StoreApi<RunOverlayState> = {
  getState: () => NULL_STATE,
  getInitialState: () => NULL_STATE,
  setState: () => undefined,
  subscribe: () => () => undefined,
};
const NULL_STATE: RunOverlayState = { nodes: new Map(), takenEdges: new Set(), iteration: new Map(), setIteration: () => undefined, selected: null };
