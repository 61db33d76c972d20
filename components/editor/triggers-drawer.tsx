"use client";

import { Drawer } from "@heroui/react";
import { SchedulesSection } from "./schedules-section";
import { WebhooksSection } from "./webhooks-section";

/**
 * What starts a workflow besides a person: its triggers, one section each.
 * Opened from the editor's toolbar once the workflow has been saved (a
 * trigger starts a saved version).
 */
export function TriggersDrawer({
  namespace,
  name,
  nodeRefs,
  isOpen,
  onOpenChange,
}: {
  namespace: string;
  name: string;
  nodeRefs: readonly string[];
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  return (
    <Drawer isOpen={isOpen} onOpenChange={onOpenChange}>
      <Drawer.Backdrop>
        <Drawer.Content className="max-w-lg" placement="right">
          <Drawer.Dialog aria-label="Triggers" className="flex h-full flex-col">
            <Drawer.CloseTrigger aria-label="Close triggers" />
            <Drawer.Header>
              <Drawer.Heading>Triggers of {name}</Drawer.Heading>
              <p className="text-sm text-muted">Runs that start themselves: from a sender&apos;s call, on a schedule.</p>
            </Drawer.Header>
            <Drawer.Body className="flex flex-1 flex-col gap-6 overflow-y-auto">{isOpen ? (
                <>
                  <SchedulesSection namespace={namespace} workflowName={name} />
                  <WebhooksSection namespace={namespace} nodeRefs={nodeRefs} workflowName={name} />
                </>
              ) : null}</Drawer.Body>
          </Drawer.Dialog>
        </Drawer.Content>
      </Drawer.Backdrop>
    </Drawer>
  );
}
