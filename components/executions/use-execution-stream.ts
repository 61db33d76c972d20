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
 * reconnects by itself and sends the last `id` it saw as Last-Event-ID, and a
 * connection reopened after the browser was offline starts `?after=` the last
 * seq applied, so a dropped connection resumes exactly after the last event
 * applied — no gap, and (seqs at or below it are ignored) no duplicate. Events arriving in one burst are applied in one batch per
 * animation frame, so a run moving fast costs one render per frame.
 */
export function useExecutionStream(id: string, afterSeq: number, handlers: ExecutionStreamHandlers): StreamState {
  const [state, setState] = useState<StreamState>("connecting");
  const latest = useRef(handlers);
  useEffect(() => {
    latest.current = handlers;
  });

  useEffect(() => {
    /** The last seq applied: a new connection resumes after it. */
    let lastSeq = afterSeq;
    let source: EventSource | null = null;
    let pending: HistoryMessage[] = [];
    let frame: number | null = null;
    const flush = () => {
      if (frame !== null) cancelAnimationFrame(frame);
      frame = null;
      const batch = pending;
      pending = [];
      if (batch.length > 0) latest.current.onHistory(batch);
    };
    const open = () => {
      const es = new EventSource(`/api/executions/${encodeURIComponent(id)}/stream?after=${lastSeq}`);
      source = es;
      es.addEventListener("open", () => setState("live"));
      es.addEventListener("error", () => setState(es.readyState === EventSource.CLOSED ? "closed" : "reconnecting"));
      es.addEventListener("history", (event) => {
        const message = JSON.parse((event as MessageEvent<string>).data) as HistoryMessage;
        // A reconnect may overlap what this connection already delivered: apply each seq once.
        if (message.seq <= lastSeq) return;
        lastSeq = message.seq;
        pending.push(message);
        frame ??= requestAnimationFrame(flush);
      });
      es.addEventListener("tasks", (event) => {
        flush();
        latest.current.onTasks((JSON.parse((event as MessageEvent<string>).data) as { tasks: SnapshotTask[] }).tasks);
      });
      es.addEventListener("workflow", (event) => {
        flush();
        latest.current.onWorkflow(JSON.parse((event as MessageEvent<string>).data) as { status: string; endedAt: string | null; reasonForIncompletion: string | null });
      });
    };
    // A dropped network can leave the socket looking open for minutes (until TCP
    // gives up): when the browser says it is offline, close at once, and reopen
    // from the last seq the moment it is back.
    const onOffline = () => {
      flush();
      source?.close();
      source = null;
      setState("reconnecting");
    };
    const onOnline = () => {
      if (!source) open();
    };
    open();
    window.addEventListener("offline", onOffline);
    window.addEventListener("online", onOnline);
    return () => {
      window.removeEventListener("offline", onOffline);
      window.removeEventListener("online", onOnline);
      if (frame !== null) cancelAnimationFrame(frame);
      source?.close();
    };
    // Opened once per run page: `afterSeq` is where it starts, later seqs come through the stream itself.
  }, [id]);

  return state;
}
