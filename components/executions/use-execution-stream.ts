"use client";

import { useEffect, useRef, useState } from "react";
import type { HistoryMessage, SnapshotTask } from "./run-model";

export type StreamState = "connecting" | "live" | "reconnecting" | "closed";

export interface ExecutionStreamHandlers {
  onHistory(events: HistoryMessage[]): void;
  onTasks(tasks: SnapshotTask[]): void;
  onWorkflow(summary: { status: string; endedAt: string | null; reasonForIncompletion: string | null }): void;
}

/**
 * The run's live stream (GET /api/executions/{id}/stream). EventSource
 * reconnects by itself and sends the last `id` it saw as Last-Event-ID, so a
 * dropped connection resumes exactly after the last event applied — no gap,
 * no duplicate. Events arriving in one burst are applied in one batch per
 * animation frame, so a run moving fast costs one render per frame.
 */
export function useExecutionStream(id: string, afterSeq: number, handlers: ExecutionStreamHandlers): StreamState {
  const [state, setState] = useState<StreamState>("connecting");
  const latest = useRef(handlers);
  useEffect(() => {
    latest.current = handlers;
  });

  useEffect(() => {
    const source = new EventSource(`/api/executions/${encodeURIComponent(id)}/stream?after=${afterSeq}`);
    let pending: HistoryMessage[] = [];
    let frame: number | null = null;
    const flush = () => {
      frame = null;
      const batch = pending;
      pending = [];
      if (batch.length > 0) latest.current.onHistory(batch);
    };
    source.addEventListener("open", () => setState("live"));
    source.addEventListener("error", () => setState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting"));
    source.addEventListener("history", (event) => {
      pending.push(JSON.parse((event as MessageEvent<string>).data) as HistoryMessage);
      frame ??= requestAnimationFrame(flush);
    });
    source.addEventListener("tasks", (event) => {
      flush();
      latest.current.onTasks((JSON.parse((event as MessageEvent<string>).data) as { tasks: SnapshotTask[] }).tasks);
    });
    source.addEventListener("workflow", (event) => {
      flush();
      latest.current.onWorkflow(JSON.parse((event as MessageEvent<string>).data) as { status: string; endedAt: string | null; reasonForIncompletion: string | null });
    });
    return () => {
      if (frame !== null) cancelAnimationFrame(frame);
      source.close();
    };
    // Opened once per run page: `afterSeq` is where it starts, later seqs come through the stream itself.
  }, [id]);

  return state;
}
