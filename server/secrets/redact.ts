import { SECRET_MASK } from "../../engine";

/**
 * Takes resolved secret values back out of what a dispatched task produced
 * — its output, its failure reason, a log line — before any of it is stored
 * or shown: each occurrence reads `***`. An HTTP endpoint that echoes the
 * request headers, a script that returns its input, an error that quotes a
 * URL carrying a key: all are redacted by value, whatever the shape.
 *
 * Each value is also looked for in the forms it takes when embedded: as a
 * JSON string's contents (quotes and backslashes escaped) and URL-encoded
 * (a key in a query string, quoted back in an error).
 */

/** Every form of each value to look for, longest first, so a value containing another is replaced whole. */
function needlesOf(values: readonly string[]): string[] {
  const needles = new Set<string>();
  for (const value of values) {
    if (value === "") continue;
    needles.add(value);
    needles.add(JSON.stringify(value).slice(1, -1));
    needles.add(encodeURIComponent(value));
  }
  return [...needles].sort((a, b) => b.length - a.length);
}

function redactWith(text: string, needles: readonly string[]): string {
  let out = text;
  for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join(SECRET_MASK);
  return out;
}

/** `text` with every secret value in it read as `***`. */
export function redactText(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  return redactWith(text, needlesOf(secrets));
}

/**
 * A copy of a JSON value with every string — object keys too — redacted.
 * Returns the value itself when there is nothing to redact. Walks any depth
 * without recursion.
 */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const needles = needlesOf(secrets);
  if (needles.length === 0) return value;
  const redactLeaf = (v: unknown): unknown => (typeof v === "string" ? redactWith(v, needles) : v);
  if (typeof value !== "object" || value === null) return redactLeaf(value) as T;
  const root: unknown = Array.isArray(value) ? [] : {};
  const stack: [unknown, unknown][] = [[value, root]];
  while (stack.length > 0) {
    const [source, target] = stack.pop()!;
    const entries: [string | number, unknown][] = Array.isArray(source) ? source.map((v, i) => [i, v]) : Object.entries(source as Record<string, unknown>);
    for (const [key, child] of entries) {
      let out: unknown = child;
      if (typeof child === "object" && child !== null) {
        out = Array.isArray(child) ? [] : {};
        stack.push([child, out]);
      } else {
        out = redactLeaf(child);
      }
      if (Array.isArray(target)) target[key as number] = out;
      else Object.defineProperty(target, typeof key === "string" ? redactWith(key, needles) : String(key), { value: out, enumerable: true, writable: true, configurable: true });
    }
  }
  return root as T;
}
