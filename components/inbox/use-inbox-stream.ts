"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "../trpc";
import { debounce } from "./inbox-model";

/**
 * The namespace's inbox stream (`inbox` events: a HumanTasks row created or
 * changed): every humanTasks query — the lists, the counts behind the
 * navigation badge, an open task — is read again, once per burst. Mounted once,
 * in the console shell, so the badge and the inbox page share one connection.
 */
export function useInboxStream(namespace: string | null): void {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!namespace) return;
    const refetch = debounce(() => void queryClient.invalidateQueries(trpc.humanTasks.pathFilter()), 250);
    const source = new EventSource(`/api/inbox/stream?namespace=${encodeURIComponent(namespace)}`);
    source.addEventListener("inbox", refetch.call);
    // Too many changes to send one by one (or no LISTEN connection): the server asks for a full read.
    source.addEventListener("resync", refetch.call);
    // After a dropped connection events may have been missed: read everything again once it is back.
    source.addEventListener("open", refetch.call);
    return () => {
      refetch.cancel();
      source.close();
    };
  }, [namespace, queryClient, trpc]);
}
