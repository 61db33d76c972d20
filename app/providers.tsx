"use client";

import { ThemeProvider } from "next-themes";
import type { ReactNode } from "react";
import { TrpcReactProvider } from "@/components/trpc";

export function Providers({ children }: { children: ReactNode }) {
  return (
    // `class` strategy: HeroUI's tokens switch on `.dark` / `.light` on <html>.
    <ThemeProvider attribute="class" defaultTheme="system" disableTransitionOnChange enableSystem storageKey="nf-theme" themes={["light", "dark"]}>
      <TrpcReactProvider>{children}</TrpcReactProvider>
    </ThemeProvider>
  );
}
