import type { Command } from "../decide/types";
import { describeCommand as describe } from "./history";

/**
 * Undefined when the two command lists are equal as JSON; otherwise what
 * differs first, e.g. `command 2 (scheduleTask b[0.1] SIMPLE): key.attempt
 * is 2 now, was 1`.
 */
export function compareCommands(expected: readonly Command[], actual: readonly Command[]): string | undefined {
  const n = Math.min(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const e = expected[i]!;
    const a = actual[i]!;
    const path = firstDifference(e, a, []);
    if (path === undefined) continue;
    if (path.length === 0 || path[0] === "kind") {
      return `command ${i} was ${describe(e)} and is now ${describe(a)}${listTail(expected, actual)}`;
    }
    const at = path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
    return `command ${i} (${describe(e)}): ${at.slice(1)} was ${show(read(e, path))} and is now ${show(read(a, path))}`;
  }
  if (expected.length > n) {
    return `decide now returns ${actual.length} command(s) where ${expected.length} were recorded; missing from command ${n}: ${expected.slice(n, n + 3).map(describe).join(", ")}${expected.length > n + 3 ? ", …" : ""}`;
  }
  if (actual.length > n) {
    return `decide now returns ${actual.length} command(s) where ${expected.length} were recorded; new from command ${n}: ${actual.slice(n, n + 3).map(describe).join(", ")}${actual.length > n + 3 ? ", …" : ""}`;
  }
  return undefined;
}

function listTail(expected: readonly Command[], actual: readonly Command[]): string {
  return expected.length === actual.length ? "" : ` (${expected.length} command(s) recorded, ${actual.length} now)`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The path to the first difference between two JSON values, or undefined when they are equal. Object key order does not count. */
function firstDifference(a: unknown, b: unknown, path: (string | number)[]): (string | number)[] | undefined {
  if (a === b) return undefined;
  if (!isObject(a) || !isObject(b) || Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], [...path, i]);
      if (d !== undefined) return d;
    }
    return a.length === b.length ? undefined : [...path, Math.min(a.length, b.length)];
  }
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  // `kind` first, so two different commands read as "was X, is now Y" rather than a field-level diff.
  keys.sort((x, y) => (x === "kind" ? -1 : y === "kind" ? 1 : 0));
  for (const k of keys) {
    const d = firstDifference(a[k], b[k], [...path, k]);
    if (d !== undefined) return d;
  }
  return undefined;
}

function read(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const p of path) v = isObject(v) ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}

function show(v: unknown): string {
  if (v === undefined) return "absent";
  const text = JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

