import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { AuthFrame } from "@/components/auth-frame";
import { isAuthPage } from "@/components/auth-routes";
import { ConsoleShell } from "@/components/console-shell";
import { requestedPath, requireConsoleSession } from "./console-session";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "node-flow", template: "%s · node-flow" },
  description: "Design workflows on a canvas, run them on Postgres.",
};

export const viewport: Viewport = {
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#f7f7f8" },
    { media: "(prefers-color-scheme: dark)", color: "#0c0c0e" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Sign-in and setup render bare; every other page is the console, for a
  // signed-in user only: requireConsoleSession redirects anyone else.
  const frame = isAuthPage(await requestedPath()) ? (
    <AuthFrame>{children}</AuthFrame>
  ) : (
    <ConsoleShell session={await requireConsoleSession()}>{children}</ConsoleShell>
  );
  return (
    // next-themes sets the theme class on <html> before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <body className="min-h-dvh">
        <Providers>{frame}</Providers>
      </body>
    </html>
  );
}
