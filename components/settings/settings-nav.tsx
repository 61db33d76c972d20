"use client";

import type { Route } from "next";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useConsoleSession } from "../console-session";
import { isActivePath } from "../nav-items";

interface Section {
  label: string;
  href: Route;
  /** Matched against the path for the current-page mark (the API keys link carries a query). */
  path: string;
}

/**
 * The Settings sections a user can use: Users for an owner, Groups and API
 * keys for an admin of the current namespace. Hiding the rest is courtesy;
 * the procedures behind them refuse anyone else regardless.
 */
export function SettingsNav() {
  const { user, namespace, role } = useConsoleSession();
  const pathname = usePathname();
  const isAdmin = user.isOwner || role === "admin";
  const sections: Section[] = [
    { label: "General", href: "/settings", path: "/settings" },
    ...(user.isOwner ? [{ label: "Users", href: "/settings/users", path: "/settings/users" } as const] : []),
    { label: "Namespaces", href: "/settings/namespaces", path: "/settings/namespaces" },
    ...(isAdmin && namespace
      ? [
          { label: "Groups", href: "/settings/groups", path: "/settings/groups" } as const,
          {
            label: "API keys",
            href: `/settings/api-keys?ns=${encodeURIComponent(namespace)}` as Route,
            path: "/settings/api-keys",
          },
        ]
      : []),
    ...(namespace && (user.isOwner || role !== null) ? [{ label: "Secrets", href: "/settings/secrets", path: "/settings/secrets" } as const] : []),
    ...(namespace && (user.isOwner || role !== null) ? [{ label: "Variables", href: "/settings/variables", path: "/settings/variables" } as const] : []),
    ...(namespace && (user.isOwner || role !== null) ? [{ label: "Event handlers", href: "/settings/event-handlers", path: "/settings/event-handlers" } as const] : []),
    ...(namespace && (user.isOwner || role !== null) ? [{ label: "AI providers", href: "/settings/ai-providers", path: "/settings/ai-providers" } as const] : []),
    // The owner also sees instance-wide events (sign-ins, users) there.
    ...((isAdmin && namespace) || user.isOwner ? [{ label: "Audit", href: "/settings/audit", path: "/settings/audit" } as const] : []),
  ];

  return (
    <nav aria-label="Settings" className="-mx-4 mb-8 overflow-x-auto border-b border-separator px-4 sm:mx-0 sm:px-0">
      <ul className="flex min-w-max gap-1">
        {sections.map((section) => {
          // General is /settings itself; every other section owns its sub-tree.
          const active = section.path === "/settings" ? pathname.replace(/\/+$/, "") === "/settings" : isActivePath(pathname, section.path);
          return (
            <li key={section.path}>
              <Link
                aria-current={active ? "page" : undefined}
                className={[
                  "-mb-px inline-flex h-10 items-center border-b-2 px-3 text-sm font-medium outline-none transition-colors",
                  "focus-visible:rounded-md focus-visible:ring-2 focus-visible:ring-focus",
                  active ? "border-accent text-foreground" : "border-transparent text-muted hover:text-foreground",
                ].join(" ")}
                href={section.href}
              >
                {section.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
