import {
  AlignLeft,
  Binary,
  Bot,
  Braces,
  CircleDashed,
  Clock,
  Code,
  Cog,
  Database,
  FileInput,
  GitBranch,
  GitMerge,
  Globe,
  Merge,
  MessageSquare,
  OctagonX,
  Plug,
  RadioTower,
  RefreshCw,
  Repeat,
  Rocket,
  Search,
  Shuffle,
  Split,
  UserCheck,
  Variable,
  Workflow,
  Wrench,
} from "lucide-react";
import type { LucideIcon } from "lucide-react";
import { NODE_TYPES } from "@/engine";
import type { NodeCategory, NodeType } from "@/engine";

/** The registry names lucide icons; imported one by one so the bundle carries only these. */
const ICONS: Readonly<Record<string, LucideIcon>> = {
  cog: Cog,
  globe: Globe,
  "refresh-cw": RefreshCw,
  database: Database,
  plug: Plug,
  wrench: Wrench,
  "message-square": MessageSquare,
  "align-left": AlignLeft,
  binary: Binary,
  bot: Bot,
  "file-input": FileInput,
  search: Search,
  code: Code,
  braces: Braces,
  variable: Variable,
  "radio-tower": RadioTower,
  "git-branch": GitBranch,
  merge: Merge,
  "git-merge": GitMerge,
  split: Split,
  repeat: Repeat,
  shuffle: Shuffle,
  clock: Clock,
  "user-check": UserCheck,
  workflow: Workflow,
  rocket: Rocket,
  "octagon-x": OctagonX,
  "circle-dashed": CircleDashed,
};

/** Tint per palette group, so a glance tells work from flow control. */
export const CATEGORY_TINT: Readonly<Record<NodeCategory, string>> = {
  work: "bg-sky-500/15 text-sky-600 dark:text-sky-300",
  ai: "bg-fuchsia-500/15 text-fuchsia-600 dark:text-fuchsia-300",
  data: "bg-violet-500/15 text-violet-600 dark:text-violet-300",
  flow: "bg-amber-500/15 text-amber-700 dark:text-amber-300",
  wait: "bg-emerald-500/15 text-emerald-700 dark:text-emerald-300",
  workflow: "bg-rose-500/15 text-rose-600 dark:text-rose-300",
};

export function NodeIcon({ type, className = "size-4" }: { type: NodeType; className?: string }) {
  const Icon = ICONS[NODE_TYPES[type].icon] ?? CircleDashed;
  return <Icon aria-hidden className={className} strokeWidth={2} />;
}

/** The icon on its tinted tile, as the palette and the nodes show it. */
export function NodeIconTile({ type, size = "md" }: { type: NodeType; size?: "sm" | "md" }) {
  const box = size === "sm" ? "size-7 rounded-md" : "size-9 rounded-lg";
  return (
    <span className={`flex shrink-0 items-center justify-center ${box} ${CATEGORY_TINT[NODE_TYPES[type].category]}`}>
      <NodeIcon className={size === "sm" ? "size-3.5" : "size-4"} type={type} />
    </span>
  );
}
