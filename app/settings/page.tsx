import { Card } from "@heroui/react";
import type { Metadata } from "next";
import { PaletteIcon } from "@/components/icons";
import { PageHeader } from "@/components/page-header";
import { SystemPanel } from "@/components/system-panel";
import { ThemeSwitcher } from "@/components/theme-switcher";
import { requestTrpc } from "../console-session";
import { HydrateClient, getServerQueryClient } from "../trpc-server";

export const metadata: Metadata = { title: "Settings" };
export const dynamic = "force-dynamic";

export default async function SettingsPage() {
  await getServerQueryClient().prefetchQuery(requestTrpc.system.status.queryOptions());
  return (
    <HydrateClient>
      <PageHeader description="How the console looks, and what it is running on. The other sections manage who can do what." title="Settings" />
      <div className="flex flex-col gap-6">
        <Card aria-labelledby="appearance-heading" className="gap-0 p-0" role="region">
          <div className="flex flex-col gap-4 px-5 py-4 sm:flex-row sm:items-center sm:justify-between">
            <div className="flex items-start gap-3">
              <span className="mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-lg bg-accent-soft text-accent">
                <PaletteIcon className="size-[18px]" />
              </span>
              <div>
                <h2 className="text-base font-semibold tracking-tight text-foreground" id="appearance-heading">
                  Appearance
                </h2>
                <p className="text-sm text-muted">Saved in this browser. System follows your operating system.</p>
              </div>
            </div>
            <ThemeSwitcher className="sm:w-auto" showLabels />
          </div>
        </Card>
        <SystemPanel />
      </div>
    </HydrateClient>
  );
}
