import type { Route } from "next";

export interface NavItem {
  href: Route;
  label: string;
  description: string;
  icon: "workflows" | "executions" | "dashboard" | "inbox" | "settings";
}

export const NAV_ITEMS: readonly NavItem[] = [
  { href: "/workflows", label: "Workflows", description: "Definitions and their versions", icon: "workflows" },
  { href: "/executions", label: "Executions", description: "Runs and their state", icon: "executions" },
  { href: "/dashboard", label: "Dashboard", description: "How runs are going, in numbers", icon: "dashboard" },
  { href: "/inbox", label: "Inbox", description: "Human tasks waiting on you", icon: "inbox" },
  { href: "/settings", label: "Settings", description: "Users, namespaces, groups, API keys and system status", icon: "settings" },
];

/**
 * Whether a nav item is the current section. A prefix match on a whole path
 * segment, so `/workflows/abc` highlights Workflows but `/workflows-old` does not.
 */
export function isActivePath(pathname: string, href: string): boolean {
  const path = pathname.replace(/\/+$/, "") || "/";
  return path === href || path.startsWith(`${href}/`);
}
