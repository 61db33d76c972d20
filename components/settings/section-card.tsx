import { Alert, Button, Card } from "@heroui/react";
import type { ReactNode } from "react";
import { EmptyState } from "../ui/empty-state";

/** A Settings panel: icon, heading and one line of context, actions on the right, then the body. */
export function SectionCard({
  id,
  icon,
  title,
  description,
  actions,
  children,
}: {
  /** Prefix of the heading's id; the card is a region named by its heading. */
  id: string;
  icon: ReactNode;
  title: string;
  description: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Card aria-labelledby={`${id}-heading`} className="gap-0 p-0" role="region">
      <div className="flex flex-col gap-3 border-b border-separator px-5 py-4 sm:flex-row sm:items-start">
        <div className="flex min-w-0 flex-1 items-start gap-3">
          <span className="mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-lg bg-accent-soft text-accent">{icon}</span>
          <div className="min-w-0">
            <h2 className="text-base font-semibold tracking-tight text-foreground" id={`${id}-heading`}>
              {title}
            </h2>
            <p className="text-sm text-muted">{description}</p>
          </div>
        </div>
        {actions ? <div className="flex items-center gap-2 self-end sm:self-auto">{actions}</div> : null}
      </div>
      {children}
    </Card>
  );
}

/** The body of a panel whose query failed: the server's message, and a retry. */
export function LoadError({ what, message, onRetry }: { what: string; message: string; onRetry: () => void }) {
  return (
    <div className="p-5">
      <Alert role="alert" status="danger">
        <Alert.Indicator />
        <Alert.Content>
          <Alert.Title>{what} could not be loaded</Alert.Title>
          <Alert.Description>{message}</Alert.Description>
        </Alert.Content>
        <Button size="sm" variant="danger-soft" onPress={onRetry}>
          Try again
        </Button>
      </Alert>
    </div>
  );
}

/** For a section the signed-in user may not use: what it is for and who can. */
export function NotPermitted({ title, children }: { title: string; children: ReactNode }) {
  return (
    <EmptyState framed title={title}>
      {children}
    </EmptyState>
  );
}
