import Link from "next/link";

/** The node-flow mark: three nodes, one fork, drawn in the accent colour. */
export function LogoMark({ className }: { className?: string }) {
  return (
    <svg aria-hidden="true" className={className} focusable="false" viewBox="0 0 32 32">
      <rect className="fill-accent" height="32" rx="9" width="32" />
      <path
        d="M10.5 16h3.5c2 0 2.5-5.5 5-5.5h2M14 16c2 0 2.5 5.5 5 5.5h2"
        fill="none"
        stroke="white"
        strokeLinecap="round"
        strokeOpacity="0.85"
        strokeWidth="1.75"
      />
      <circle cx="9" cy="16" fill="white" r="2.75" />
      <circle cx="22.5" cy="10.5" fill="white" r="2.25" />
      <circle cx="22.5" cy="21.5" fill="white" r="2.25" />
    </svg>
  );
}

export function Wordmark() {
  return (
    <Link
      aria-label="node-flow home"
      className="flex items-center gap-2.5 rounded-lg outline-none focus-visible:ring-2 focus-visible:ring-focus"
      href="/workflows"
    >
      <LogoMark className="size-8 shrink-0" />
      <span className="text-[15px] font-semibold tracking-tight text-foreground">
        node<span className="text-muted">-</span>flow
      </span>
    </Link>
  );
}
