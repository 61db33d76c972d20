/**
 * CPU of process trees, from /proc: what `npm run bench` charges to the web
 * process, the sidecar, Postgres and the workers. A tree, because Postgres's
 * work is done by its backends, children of the postmaster.
 */
import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime: its own CPU and its reaped children's (a Postgres backend that exited). */
  ticks: number;
}

export function readProcs(): Map<number, ProcStat> {
  const procs = new Map<number, ProcStat>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return procs;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      procs.set(Number(entry), { ppid: Number(fields[1]), ticks });
    } catch {
      // Exited while we looked.
    }
  }
  return procs;
}

/** CPU seconds of each root and all its descendants. */
export function treeCpuSeconds(roots: readonly number[], procs: Map<number, ProcStat>): number {
  const children = new Map<number, number[]>();
  for (const [pid, stat] of procs) {
    const list = children.get(stat.ppid);
    if (list) list.push(pid);
    else children.set(stat.ppid, [pid]);
  }
  let ticks = 0;
  const stack = [...roots];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += procs.get(pid)?.ticks ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}
