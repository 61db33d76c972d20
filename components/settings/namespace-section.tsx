"use client";

import { Fragment } from "react";
import type { ReactNode } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import { useConsoleSession } from "../console-session";
import { NoNamespacePanel } from "../no-namespace-panel";
import { NotPermitted } from "./section-card";

/**
 * A Settings section of the namespace in the switcher: none chosen, or no role
 * there, says so; otherwise it renders the section, told whether this user may
 * change it (an owner always may; otherwise the roles in `writers`). Keyed by
 * the namespace, so switching it starts the section afresh.
 */
export function NamespaceSection({ writers, children }: { writers: readonly NamespaceRole[]; children: (namespace: string, canWrite: boolean) => ReactNode }) {
  const { namespace, role, user } = useConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  if (role === null && !user.isOwner) {
    return <NotPermitted title={`You have no role in ${namespace}`}>Ask an admin of {namespace} for access.</NotPermitted>;
  }
  return <Fragment key={namespace}>{children(namespace, user.isOwner || (role !== null && writers.includes(role)))}</Fragment>;
}
