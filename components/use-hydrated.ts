"use client";

import { useSyncExternalStore } from "react";

const subscribe = () => () => undefined;

/**
 * False during SSR and the hydrating render, true after. For output that only
 * the browser can know (the stored theme, the viewer's time zone): rendering
 * it on the server would mismatch on hydration.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
