"use client";

import { useConsoleSession } from "../console-session";
import { NoNamespacePanel } from "../no-namespace-panel";
import { GroupsPanel } from "./groups-panel";
import { NotPermitted } from "./section-card";

/** Groups of the namespace in the switcher, for an admin there. */
export function CurrentNamespaceGroups() {
  const { namespace, role } = useConsoleSession();
  if (!namespace) return <NoNamespacePanel />;
  if (role !== "admin") {
    return (
      <NotPermitted title={`Only an admin of ${namespace} manages its groups`}>
        Your role here is {role ?? "none"}. Switch to a namespace where you are an admin, or ask one.
      </NotPermitted>
    );
  }
  return <GroupsPanel key={namespace} namespace={namespace} />;
}
