import { Card, EmptyState as HeroEmptyState } from "@heroui/react";
import type { ReactNode } from "react";

/**
 * The body of a panel or table with nothing in it yet: one line saying so,
 * what will be here and how it gets there, and the first step if the reader
 * can take it. Inside a panel it is a plain block; `framed` gives it a card of
 * its own, for a page section with no panel around it. `compact` is for a
 * panel that is already tall (a form above the list).
 */
export function EmptyState({
  title,
  children,
  action,
  framed = false,
  compact = false,
}: {
  title: string;
  children?: ReactNode;
  action?: ReactNode;
  framed?: boolean;
  compact?: boolean;
}) {
  const body = (
    <>
      <p className="text-sm font-medium text-foreground">{title}</p>
      {children ? <p className="max-w-md text-sm text-muted">{children}</p> : null}
      {action ? <div className="mt-2">{action}</div> : null}
    </>
  );
  const padding = compact ? "py-10" : "py-12";
  return framed ? (
    <Card className={`items-center gap-2 px-6 text-center ${padding}`}>{body}</Card>
  ) : (
    <div className={`flex flex-col items-center gap-2 px-6 text-center ${padding}`}>{body}</div>
  );
}

/**
 * An honest empty state for a whole page: what it will hold and how it gets
 * there, never placeholder rows. `upcoming` lists what is on its way.
 */
export function EmptyStatePanel({
  illustration,
  title,
  children,
  upcoming,
  action,
}: {
  illustration: ReactNode;
  title: string;
  children: ReactNode;
  upcoming?: { title: string; detail: string }[];
  action?: ReactNode;
}) {
  return (
    <Card className="overflow-hidden p-0">
      <HeroEmptyState className="flex flex-col items-center px-6 pt-12 pb-10 text-center sm:px-10">
        <div className="mb-6">{illustration}</div>
        <h2 className="text-lg font-semibold tracking-tight text-foreground">{title}</h2>
        <div className="mt-2 max-w-md text-sm leading-6 text-muted">{children}</div>
        {action ? <div className="mt-6">{action}</div> : null}
      </HeroEmptyState>
      {upcoming && upcoming.length > 0 ? (
        <div className="border-t border-separator bg-surface-secondary/50 px-6 py-6 sm:px-10">
          <p className="mb-4 text-xs font-semibold tracking-wide text-muted uppercase">What will come</p>
          <ul className="grid gap-4 sm:grid-cols-3">
            {upcoming.map((item) => (
              <li key={item.title} className="flex gap-3">
                <span aria-hidden="true" className="mt-1.5 size-1.5 shrink-0 rounded-full bg-accent" />
                <div>
                  <p className="text-sm font-medium text-foreground">{item.title}</p>
                  <p className="mt-0.5 text-sm leading-5 text-muted">{item.detail}</p>
                </div>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </Card>
  );
}
