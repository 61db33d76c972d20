import type { ReactNode } from "react";
import { ThemeSwitcher } from "./theme-switcher";
import { LogoMark } from "./wordmark";

/** The page around sign-in and owner setup: no navigation, nothing of the console until someone is signed in. */
export function AuthFrame({ children }: { children: ReactNode }) {
  return (
    <div className="flex min-h-dvh flex-col">
      <main className="flex flex-1 flex-col items-center justify-center px-4 py-10 sm:py-16" id="main">
        <div className="mb-8 flex items-center gap-2.5">
          <LogoMark className="size-9" />
          <span className="text-lg font-semibold tracking-tight text-foreground">
            node<span className="text-muted">-</span>flow
          </span>
        </div>
        <div className="w-full max-w-[26rem]">{children}</div>
      </main>
      <footer className="flex justify-center pb-6">
        <ThemeSwitcher />
      </footer>
    </div>
  );
}
