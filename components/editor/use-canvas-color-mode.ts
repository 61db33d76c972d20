"use client";

import { useTheme } from "next-themes";
import { useEffect, useState } from "react";

/**
 * The canvas's colour mode, "dark" or "light", for React Flow's `colorMode` and
 * for the overview's repaint. The theme is known only in the browser:
 * rendered during hydration, "dark" would not match the server's "light", and
 * React keeps the server's attribute on a mismatch, so after a full load in
 * dark mode the canvas stayed light. It is taken once mounted.
 */
export function useCanvasColorMode(): "dark" | "light" {
  const { resolvedTheme } = useTheme();
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  return mounted && resolvedTheme === "dark" ? "dark" : "light";
}
