"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import type { ComponentType, ReactNode, SVGProps } from "react";
import { DashboardIcon, ExecutionsIcon, InboxIcon, SettingsIcon, WorkflowIcon } from "./icons";
import { NAV_ITEMS, isActivePath } from "./nav-items";
import type { NavItem } from "./nav-items";

const ICONS: Record<NavItem["icon"], ComponentType<SVGProps<SVGSVGElement>>> = {
  workflows: WorkflowIcon,
  executions: ExecutionsIcon,
  dashboard: DashboardIcon,
  inbox: InboxIcon,
  settings: SettingsIcon,
};

/** `badges`: drawn at the end of an item's link (the inbox count). */
export function NavLinks({ onNavigate, badges }: { onNavigate?: () => void; badges?: Partial<Record<NavItem["icon"], ReactNode>> }) {
  const pathname = usePathname();
  return (
    <ul className="flex flex-col gap-0.5">
      {NAV_ITEMS.map((item) => {
        const active = isActivePath(pathname, item.href);
        const ItemIcon = ICONS[item.icon];
        return (
          <li key={item.href}>
            <Link
              aria-current={active ? "page" : undefined}
              className={[
                "group flex items-center gap-3 rounded-xl px-3 py-2 text-sm font-medium outline-none transition-colors",
                "focus-visible:ring-2 focus-visible:ring-focus",
                active
                  ? "bg-accent-soft text-accent-soft-foreground"
                  : "text-muted hover:bg-default hover:text-foreground",
              ].join(" ")}
              href={item.href}
              onClick={onNavigate}
            >
              <ItemIcon
                className={[
                  "size-[18px] shrink-0 transition-colors",
                  active ? "text-accent" : "text-muted group-hover:text-foreground",
                ].join(" ")}
              />
              {item.label}
              {badges?.[item.icon]}
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
