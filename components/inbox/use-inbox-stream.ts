"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "../trpc";
import { debounce } from "./inbox-model";

/**
 * The namespace's inbox stream (`inbox` events: a HumanTasks row created or
 * changed; `resync`: read everything again): every humanTasks query — the
 * lists, the counts behind the navigation badge, an open task — is read again,
 * once per burst. Mounted once, in the console shell.
 *
 * One connection per browser, not per tab: the shell is on every page, and a
 * browser allows six HTTP/1.1 connections per host — three tabs each holding
 * this stream and a page's own (the run page, the executions list) would leave
 * none for requests. The tab holding a Web Lock opens the EventSource and
 * relays each change to the other tabs over a BroadcastChannel; when it closes,
 * the lock passes to another tab, which opens its own (and refetches, having
 * perhaps missed events in between).
 */
export function useInboxStream(namespace: string | null): void {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!namespace) return;
    const refetch = debounce(() => void queryClient.invalidateQueries(trpc.humanTasks.pathFilter()), 250);
    const name = `node-flow-inbox:${namespace}`;
    const channel = typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel(name);
    if (channel) channel.onmessage = refetch.call;
    const stop = new AbortController();

    const lead = () =>
      new Promise<void>((resolve) => {
        const source = new EventSource(`/api/inbox/stream?namespace=${encodeURIComponent(namespace)}`);
        const changed = () => {
          refetch.call();
          channel?.postMessage("changed");
        };
        source.addEventListener("inbox", changed);
        source.addEventListener("resync", changed);
        // Opened, or reopened after a drop: whatever happened meanwhile was not heard.
        source.addEventListener("open", changed);
        stop.signal.addEventListener("abort", () => {
          source.close();
          resolve();
        });
      });

    if (typeof navigator !== "undefined" && "locks" in navigator) {
      // Rejects with AbortError when the page goes before its turn came: nothing to clean up then.
      navigator.locks.request(name, { signal: stop.signal }, lead).catch(() => undefined);
    } else {
      void lead();
    }
    return () => {
      stop.abort();
      refetch.cancel();
      channel?.close();
    };
  }, [namespace, queryClient, trpc]);
}
