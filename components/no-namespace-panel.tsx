import { EmptyStatePanel } from "./ui/empty-state";
import { WorkflowCanvasIllustration } from "./illustrations";

/** For a signed-in user who belongs to no namespace yet: nothing to show, and who can change that. */
export function NoNamespacePanel() {
  return (
    <EmptyStatePanel illustration={<WorkflowCanvasIllustration />} title="You are not in any namespace yet">
      Everything in node-flow lives in a namespace. An admin adds you to one (Settings → Namespaces), or to a group that has a
      role there; it appears in the namespace switcher as soon as they do.
    </EmptyStatePanel>
  );
}
