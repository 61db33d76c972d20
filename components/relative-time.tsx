"use client";

import { formatAbsoluteTime, formatRelativeTime } from "./format";
import { useHydrated } from "./use-hydrated";

/**
 * "5 minutes ago", with the exact time in the viewer's zone on hover. The
 * absolute time waits for hydration: the server does not know the viewer's
 * time zone. The relative text can drift a minute between server and client
 * render, which is what suppressHydrationWarning is for here.
 */
export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const hydrated = useHydrated();
  const date = new Date(iso);
  return (
    <time className={className} dateTime={iso} suppressHydrationWarning title={hydrated ? formatAbsoluteTime(date) : undefined}>
      {formatRelativeTime(date, new Date())}
    </time>
  );
}
