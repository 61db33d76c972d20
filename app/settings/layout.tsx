import type { ReactNode } from "react";
import { SettingsNav } from "@/components/settings/settings-nav";

/** Every Settings section under one strip of links; each section renders its own heading. */
export default function SettingsLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <SettingsNav />
      {children}
    </>
  );
}
