"use client";

import { ToggleButton, ToggleButtonGroup, Tooltip } from "@heroui/react";
import { useTheme } from "next-themes";
import type { ComponentType, SVGProps } from "react";
import { MonitorIcon, MoonIcon, SunIcon } from "./icons";
import { useHydrated } from "./use-hydrated";

const THEMES: { id: "light" | "dark" | "system"; label: string; icon: ComponentType<SVGProps<SVGSVGElement>> }[] = [
  { id: "light", label: "Light", icon: SunIcon },
  { id: "dark", label: "Dark", icon: MoonIcon },
  { id: "system", label: "System", icon: MonitorIcon },
];


/** Light / dark / system. next-themes persists the choice in localStorage and applies it before first paint. */
export function ThemeSwitcher({ showLabels = false, className }: { showLabels?: boolean; className?: string }) {
  const { theme, setTheme } = useTheme();
  // The stored theme lives in localStorage, which the server cannot read.
  const hydrated = useHydrated();
  const selected = hydrated && theme ? [theme] : [];

  return (
    <ToggleButtonGroup
      aria-label="Theme"
      className={className}
      disallowEmptySelection
      fullWidth={showLabels}
      selectedKeys={selected}
      selectionMode="single"
      size="sm"
      onSelectionChange={(keys) => {
        const [next] = [...keys];
        if (typeof next === "string") setTheme(next);
      }}
    >
      {THEMES.map(({ id, label, icon: ThemeIcon }) =>
        showLabels ? (
          <ToggleButton key={id} aria-label={`${label} theme`} className="gap-2" id={id}>
            <ThemeIcon className="size-4" />
            {label}
          </ToggleButton>
        ) : (
          <Tooltip key={id} delay={400}>
            <ToggleButton aria-label={`${label} theme`} id={id} isIconOnly>
              <ThemeIcon className="size-4" />
            </ToggleButton>
            <Tooltip.Content>{label}</Tooltip.Content>
          </Tooltip>
        ),
      )}
    </ToggleButtonGroup>
  );
}
