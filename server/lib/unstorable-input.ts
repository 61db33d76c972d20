/**
 * Input no row can hold, found at the edge — before a handler, a zod schema
 * or the database sees it — so that it is a 400 naming the value rather than
 * a 500 from deep inside:
 *
 * - NUL (U+0000): Postgres refuses it in text ("invalid byte sequence for
 *   encoding UTF8: 0x00") and in jsonb ("unsupported Unicode escape
 *   sequence"), so a NUL anywhere in a name, a worker id or a run's output
 *   made the statement fail.
 * - An unpaired UTF-16 surrogate ("\ud800" is valid JSON): jsonb refuses it,
 *   and in text the driver's UTF-8 encoding silently turns it into U+FFFD, so
 *   the stored value is not the one sent.
 * - Nesting deeper than MAX_JSON_DEPTH: JSON.parse takes a million levels,
 *   but JSON.stringify — run on every payload on its way to jsonb — overflows
 *   Node's stack near 4,000, and every recursive walker downstream (the
 *   engine's, the console's JSON views) sooner.
 *
 * One iterative walk, so a million-deep body costs a loop, not the stack.
 * The REST and Conductor dispatchers check every body, path parameter and
 * query value; the tRPC procedures their raw input (server/trpc/init.ts).
 */

/**
 * How deep a JSON value may nest: serde_json's default recursion limit, twice
 * the engine's for definitions (engine/definition/limits.ts), and a thirtieth
 * of where JSON.stringify overflows.
 */
export const MAX_JSON_DEPTH = 128;

/** The path of a refused value (keys and indexes from the checked root) and why. */
export interface UnstorableValue {
  path: (string | number)[];
  message: string;
}

/** A pointer into 10,000 levels would be 20 KB of "/a": the path is cut here, naming the outermost part. */
const MAX_REPORTED_SEGMENTS = 8;

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableText(text: string): string | null {
  if (text.includes("\u0000")) return "contains a NUL character (\\u0000), which cannot be stored";
  if (UNPAIRED_SURROGATE.test(text)) return "contains an unpaired UTF-16 surrogate, which is not valid Unicode";
  return null;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string | number;
  parent: Frame | null;
}

function pathOf(frame: Frame | null): (string | number)[] {
  const path: (string | number)[] = [];
  for (let f = frame; f !== null && f.parent !== null; f = f.parent) path.push(f.key);
  return path.reverse();
}

/**
 * The first value of `root` (parsed JSON) that cannot be stored, or null.
 * `strings: false` skips the string checks — for a body whose JSON text has
 * no `\u` escape, which is the only way NUL or a lone surrogate gets into
 * strictly decoded UTF-8.
 */
export function findUnstorableValue(root: unknown, options: { strings?: boolean; maxDepth?: number } = {}): UnstorableValue | null {
  const checkStrings = options.strings ?? true;
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const stack: Frame[] = [{ value: root, depth: 0, key: "", parent: null }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const { value } = frame;
    if (typeof value === "string") {
      const problem = checkStrings ? unstorableText(value) : null;
      if (problem !== null) return { path: pathOf(frame), message: problem };
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    const depth = frame.depth + 1;
    if (depth > maxDepth) {
      return { path: pathOf(frame).slice(0, MAX_REPORTED_SEGMENTS), message: `nests deeper than ${maxDepth} levels` };
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i] as unknown, depth, key: i, parent: frame });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Frame = { value: (value as Record<string, unknown>)[key], depth, key, parent: frame };
      const keyProblem = checkStrings ? unstorableText(key) : null;
      if (keyProblem !== null) return { path: pathOf(child), message: `has a key that ${keyProblem}` };
      stack.push(child);
    }
  }
  return null;
}

/** findUnstorableValue for a body's JSON text and its parse: the string checks run only when the text has an escape that could hide one. */
export function findUnstorableBody(text: string, parsed: unknown): UnstorableValue | null {
  return findUnstorableValue(parsed, { strings: text.includes("\\u") });
}
