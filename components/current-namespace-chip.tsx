"use client";

import { Chip } from "@heroui/react";
import { useConsoleSession } from "./console-session";

/** "Namespace: billing · editor" beside a page title, following the switcher. */
export function CurrentNamespaceChip() {
  const { namespace, role } = useConsoleSession();
  if (!namespace) return null;
  return (
    <Chip size="sm" variant="soft">
      Namespace: {namespace}
      {role ? <span className="text-muted"> · {role}</span> : null}
    </Chip>
  );
}
