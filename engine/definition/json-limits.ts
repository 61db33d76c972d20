import type { DefinitionLimits } from "./limits";
import type { Problem, ProblemPath } from "./problems";

/**
 * The first pass over untrusted input, before zod sees any of it: it enforces
 * the size limits and that the input is plain JSON data. One iterative walk,
 * O(values), never recursing — so a 10k-deep value, a cyclic object or a
 * shared-reference bomb built in memory cost at most `maxValues` steps.
 */

/** Where the walk stopped descending, or found something zod must not be handed. */
export interface JsonLimitResult {
  problems: Problem[];
  /**
   * Top-level paths (`["nodes", 3]`, `["edges", 0]`, `["inputSchema"]`) holding
   * a value that must not be parsed further (too deep, not JSON). Strings that
   * are merely too long are not listed: parsing them is cheap, and the rest of
   * their node's problems are still worth reporting.
   */
  unsafe: Set<string>;
  /** Path of every problem reported, so a zod issue at or under one is not reported twice. */
  reported: Set<string>;
  /** True when the value budget ran out; nothing after that point was looked at. */
  exhausted: boolean;
}

interface Link {
  readonly key: string | number;
  readonly parent: Link | null;
}

function materialize(link: Link | null): ProblemPath {
  const out: ProblemPath = [];
  for (let l = link; l !== null; l = l.parent) out.push(l.key);
  return out.reverse();
}

/** Key for a path in the sets above. */
export function pathKey(path: ProblemPath): string {
  return JSON.stringify(path);
}

/** The top-level unit a path belongs to: `nodes[i]` / `edges[i]`, else the top-level key. */
export function unitKey(path: ProblemPath): string {
  const [first, second] = path;
  if ((first === "nodes" || first === "edges") && typeof second === "number") return pathKey([first, second]);
  return pathKey(first === undefined ? [] : [first]);
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "object" && value !== null) {
    const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof ctor === "string" ? `a ${ctor}` : "an object with a prototype";
  }
  return `a ${typeof value}`;
}

/**
 * Walks `root` (whose own top-level keys in `skip` are not entered: the
 * caller has refused them for size already) and reports every limit breach.
 * The caller has checked that `root` is a plain object.
 */
export function checkJsonLimits(root: unknown, limits: DefinitionLimits, skip: ReadonlySet<string> = new Set()): JsonLimitResult {
  const result: JsonLimitResult = { problems: [], unsafe: new Set(), reported: new Set(), exhausted: false };
  const stack: { value: unknown; link: Link | null; depth: number }[] = [{ value: root, link: null, depth: 0 }];
  let budget = limits.maxValues;

  const report = (code: Problem["code"], message: string, link: Link | null, unsafe: boolean): void => {
    const path = materialize(link);
    result.problems.push({ code, message, path });
    result.reported.add(pathKey(path));
    if (unsafe) result.unsafe.add(unitKey(path));
  };

  while (stack.length > 0) {
    const { value, link, depth } = stack.pop() as { value: unknown; link: Link | null; depth: number };
    if (--budget < 0) {
      result.exhausted = true;
      report("too-large", `The definition holds more than ${limits.maxValues} JSON values; it is not checked further`, link, true);
      return result;
    }
    switch (typeof value) {
      case "string":
        if (value.length > limits.maxStringLength) {
          report("string-too-long", `A string of ${value.length} characters; the limit is ${limits.maxStringLength}`, link, false);
        }
        continue;
      case "boolean":
      case "undefined": // an absent optional field, as TypeScript callers write it
        continue;
      case "number":
        if (!Number.isFinite(value)) report("not-json", `${describe(value)} is not a JSON number`, link, true);
        continue;
      case "object":
        break;
      default:
        report("not-json", `${describe(value)} is not JSON data`, link, true);
        continue;
    }
    if (value === null) continue;
    if (depth >= limits.maxDepth) {
      // One report per node, edge or top-level field: a deep value usually
      // breaches the limit along many sibling paths at once.
      if (!result.unsafe.has(unitKey(materialize(link)))) report("too-deep", `Values nest more than ${limits.maxDepth} levels deep here`, link, true);
      continue;
    }
    try {
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          stack.push({ value: value[i] as unknown, link: { key: i, parent: link }, depth: depth + 1 });
        }
        continue;
      }
      if (!isPlainObject(value)) {
        report("not-json", `${describe(value)} is not a plain JSON object`, link, true);
        continue;
      }
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        if (depth === 0 && skip.has(key)) continue;
        const child: Link = { key, parent: link };
        if (key === "__proto__") {
          report("forbidden-key", "`__proto__` is not allowed as a key", child, true);
          continue;
        }
        if (key.length > limits.maxStringLength) {
          report("string-too-long", `A key of ${key.length} characters; the limit is ${limits.maxStringLength}`, child, false);
        }
        stack.push({ value: (value as Record<string, unknown>)[key], link: child, depth: depth + 1 });
      }
    } catch {
      // A Proxy or getter that throws: in-process callers only, but never let it escape.
      report("not-json", "A value that cannot be read as JSON data", link, true);
    }
  }
  return result;
}
