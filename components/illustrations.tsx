import type { ReactNode } from "react";

/**
 * Empty-state illustrations, drawn with the theme's tokens (`fill-surface`,
 * `stroke-muted/50`, `text-accent`) so they read in light and dark alike.
 */

function Frame({ children, label }: { children: ReactNode; label: string }) {
  return (
    <svg aria-label={label} className="h-28 w-44 text-accent" role="img" viewBox="0 0 176 112">
      <defs>
        <pattern height="12" id="nf-dots" patternUnits="userSpaceOnUse" width="12">
          <circle className="fill-muted/25" cx="1.5" cy="1.5" r="1.1" />
        </pattern>
      </defs>
      <rect fill="url(#nf-dots)" height="112" rx="16" width="176" />
      {children}
    </svg>
  );
}

function Node({ x, y, w = 44, accent = false }: { x: number; y: number; w?: number; accent?: boolean }) {
  return (
    <g>
      <rect
        className={accent ? "fill-accent-soft stroke-accent" : "fill-surface stroke-muted/50"}
        height="22"
        rx="6"
        strokeWidth="1.5"
        width={w}
        x={x}
        y={y}
      />
      <rect className={accent ? "fill-accent" : "fill-muted/35"} height="4" rx="2" width={w - 20} x={x + 8} y={y + 9} />
    </g>
  );
}

export function WorkflowCanvasIllustration() {
  return (
    <Frame label="An empty workflow canvas">
      <path
        className="stroke-muted/50"
        d="M58 56h12c8 0 8-22 16-22h6M70 56c8 0 8 22 16 22h6M136 34h4c6 0 6 22 12 22M136 78h4c6 0 6-22 12-22"
        fill="none"
        strokeDasharray="3 3"
        strokeWidth="1.5"
      />
      <Node accent x={14} y={45} />
      <Node x={92} y={23} />
      <Node x={92} y={67} />
      <circle className="fill-surface stroke-accent" cx="158" cy="56" r="7" strokeWidth="1.5" />
      <path className="stroke-accent" d="M155 56h6M158 53v6" strokeLinecap="round" strokeWidth="1.5" />
    </Frame>
  );
}

export function ExecutionsIllustration() {
  return (
    <Frame label="An empty timeline of runs">
      {[26, 52, 78].map((y, i) => (
        <g key={y} opacity={1 - i * 0.28}>
          <circle className={i === 0 ? "fill-accent" : "fill-muted/35"} cx="30" cy={y} r="5" />
          <rect className="fill-surface stroke-muted/50" height="16" rx="5" strokeWidth="1.5" width="112" x="44" y={y - 8} />
          <rect className={i === 0 ? "fill-accent" : "fill-muted/35"} height="4" rx="2" width={64 - i * 14} x="52" y={y - 2} />
        </g>
      ))}
      <path className="stroke-muted/50" d="M30 33v12M30 59v12" strokeDasharray="2 3" strokeWidth="1.5" />
    </Frame>
  );
}

export function InboxIllustration() {
  return (
    <Frame label="An empty inbox">
      <rect className="fill-surface stroke-muted/50" height="38" rx="8" strokeWidth="1.5" width="84" x="46" y="44" />
      <path
        className="fill-accent-soft stroke-accent"
        d="M46 62h22l5 8h30l5-8h22v12a8 8 0 0 1-8 8H54a8 8 0 0 1-8-8V62Z"
        strokeLinejoin="round"
        strokeWidth="1.5"
      />
      <rect className="fill-surface stroke-muted/50" height="30" rx="5" strokeWidth="1.5" width="52" x="62" y="22" />
      <rect className="fill-muted/35" height="4" rx="2" width="32" x="72" y="31" />
      <rect className="fill-muted/35" height="4" rx="2" width="22" x="72" y="39" />
    </Frame>
  );
}
