"use client";

import { Button, Drawer } from "@heroui/react";
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";
import { useState } from "react";
import { ConsoleSessionProvider, useNamespace } from "./console-session";
import type { InitialConsoleSession } from "./console-session";
import { MenuIcon } from "./icons";
import { InboxCountBadge } from "./inbox/inbox-badge";
import { useInboxStream } from "./inbox/use-inbox-stream";
import { NamespaceSwitcher } from "./namespace-switcher";
import { NavLinks } from "./nav-links";
import { ThemeSwitcher } from "./theme-switcher";
import { UserMenu } from "./user-menu";
import { Wordmark } from "./wordmark";

/**
 * The frame around every console page: a sidebar from `md` up, and below that
 * a top bar whose menu button opens the same navigation in a drawer. Only a
 * signed-in user ever sees it (app/layout.tsx).
 */
export function ConsoleShell({ session, children }: { session: InitialConsoleSession; children: ReactNode }) {
  return (
    <ConsoleSessionProvider initial={session}>
      <ConsoleFrame>{children}</ConsoleFrame>
    </ConsoleSessionProvider>
  );
}

const NAV_BADGES = { inbox: <InboxCountBadge /> };

function ConsoleFrame({ children }: { children: ReactNode }) {
  // One inbox stream for the whole console: it keeps the badge and the inbox page live.
  useInboxStream(useNamespace());
  return (
    <div className="min-h-dvh md:grid md:grid-cols-[15.5rem_minmax(0,1fr)]">
      <a
        className="sr-only focus:not-sr-only focus:fixed focus:top-3 focus:left-3 focus:z-50 focus:rounded-lg focus:bg-surface focus:px-3 focus:py-2 focus:text-sm focus:shadow-overlay"
        href="#main"
      >
        Skip to content
      </a>

      <aside className="sticky top-0 hidden h-dvh flex-col border-r border-separator bg-surface/60 md:flex">
        <div className="px-5 pt-5 pb-5">
          <Wordmark />
        </div>
        <NamespaceSwitcher className="mx-3 mb-4 px-2" />
        <nav aria-label="Main" className="flex-1 overflow-y-auto px-3">
          <NavLinks badges={NAV_BADGES} />
        </nav>
        <SidebarFooter />
      </aside>

      <MobileTopBar />

      <main className="min-w-0 px-4 pt-6 pb-16 sm:px-6 md:px-10 md:pt-10" id="main" tabIndex={-1}>
        <div className="mx-auto w-full max-w-6xl">{children}</div>
      </main>
    </div>
  );
}

function SidebarFooter() {
  return (
    <div className="flex flex-col gap-3 border-t border-separator px-3 py-4">
      <UserMenu />
      <div className="flex items-center justify-between gap-2 px-2">
        <span className="text-xs font-medium text-muted">Theme</span>
        <ThemeSwitcher />
      </div>
    </div>
  );
}

function MobileTopBar() {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  // Close the drawer when the route changes, including through the browser's
  // back button, not only when a link inside it is clicked.
  const [seenPath, setSeenPath] = useState(pathname);
  if (seenPath !== pathname) {
    setSeenPath(pathname);
    setOpen(false);
  }

  return (
    <header className="sticky top-0 z-30 flex h-14 items-center justify-between gap-3 border-b border-separator bg-background/85 px-4 backdrop-blur-md md:hidden">
      <Wordmark />
      <div className="flex items-center gap-2">
        <UserMenu compact />
        <Drawer isOpen={open} onOpenChange={setOpen}>
          <Button aria-label="Open navigation" className="relative" isIconOnly size="sm" variant="ghost">
            <MenuIcon className="size-5" />
            {/* The inbox count shows through the closed menu; it is read out on the Inbox link inside. */}
            <span aria-hidden className="absolute -top-1 -right-1">
              <InboxCountBadge className="" />
            </span>
          </Button>
          <Drawer.Backdrop variant="blur">
            <Drawer.Content className="max-w-[18rem]" placement="left">
              <Drawer.Dialog aria-label="Navigation" className="flex h-full flex-col">
                <Drawer.CloseTrigger aria-label="Close navigation" />
                <Drawer.Header className="pb-4">
                  <Wordmark />
                </Drawer.Header>
                <Drawer.Body className="flex-1 px-1">
                  <NamespaceSwitcher className="mb-4 px-3" />
                  <nav aria-label="Main">
                    <NavLinks badges={NAV_BADGES} onNavigate={() => setOpen(false)} />
                  </nav>
                </Drawer.Body>
                <Drawer.Footer className="flex-col items-stretch gap-2 border-t border-separator pt-4">
                  <span className="text-xs font-medium text-muted">Theme</span>
                  <ThemeSwitcher showLabels />
                </Drawer.Footer>
              </Drawer.Dialog>
            </Drawer.Content>
          </Drawer.Backdrop>
        </Drawer>
      </div>
    </header>
  );
}
