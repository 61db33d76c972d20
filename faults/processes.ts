import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** A live process: its pid, its parent's, and its command line. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  cmdline: string;
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name sits in parentheses and may hold spaces: the fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(fields[1]), cmdline };
  } catch {
    return undefined; // gone while we looked
  }
}

/** Every process, from /proc. */
export function listProcesses(): ProcessInfo[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProcess(Number(name)))
    .filter((info): info is ProcessInfo => info !== undefined);
}

/** The direct child of `parent` whose command line contains `marker`, if one runs. */
export function childOf(parent: number, marker: string): ProcessInfo | undefined {
  return listProcesses().find((p) => p.ppid === parent && p.cmdline.includes(marker));
}

/** Every direct child of `parent`. */
export function childrenOf(parent: number): ProcessInfo[] {
  return listProcesses().filter((p) => p.ppid === parent);
}

/** The postmaster of the cluster in `postgresDir`, from its postmaster.pid (first line), when it runs. */
export function postmasterPid(postgresDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(postgresDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 && readProcess(pid) !== undefined ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
