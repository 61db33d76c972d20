import { ConfigError, parseRoles } from "../lib/config";
import type { Role } from "../lib/config";

export const DEFAULT_WORKER_ROLES = "decider,poller";

/**
 * The loops a sidecar runs, from NODE_FLOW_ROLES (default `decider,poller`).
 * `api` is the web process's role (`next start`), so the sidecar drops it; a
 * list with nothing else is refused rather than started as a process that
 * idles forever while every workflow waits for a decider.
 * Shared by `server/sidecar/main.ts` and `nf start`, which checks it before it creates anything.
 */
export function resolveWorkerRoles(value: string | undefined): Role[] {
  const roles = parseRoles(value ?? DEFAULT_WORKER_ROLES).filter((role) => role !== "api");
  if (roles.length === 0) {
    throw new ConfigError([
      `NODE_FLOW_ROLES=${value ?? ""} leaves the worker nothing to run: the api role is served by the web process. Give the worker decider and/or poller (the default is ${DEFAULT_WORKER_ROLES}).`,
    ]);
  }
  return roles;
}
