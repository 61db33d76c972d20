/**
 * Helpers for walking untrusted JSON values without touching prototypes and
 * without recursion (a hostile definition can nest 10k levels deep).
 */

/** A JSON object as the expression code sees it: any non-null, non-array object. */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for an array or object: a value a path can step into. */
export function isContainer(value: unknown): value is JsonObject | unknown[] {
  return typeof value === "object" && value !== null;
}

/**
 * Own-property lookup. `${workflow.input.constructor}` must give null, not
 * Object's constructor: a plain `obj[key]` would read the prototype chain.
 */
export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/**
 * Defines an own, enumerable property. Plain assignment of `__proto__` would
 * replace the object's prototype instead of creating a key, which JSON allows.
 */
export function setOwn(obj: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Structural equality of two JSON values, iterative so deep values cannot overflow the stack. */
export function jsonEquals(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y) continue;
    if (!isContainer(x) || !isContainer(y)) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const xo = x;
    const yo = y;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const k of keys) {
      if (!hasOwn(yo, k)) return false;
      stack.push([xo[k], yo[k]]);
    }
  }
  return true;
}

/**
 * How a value reads when interpolated into a longer string. Conductor uses
 * Java's `Objects.toString`: null becomes "null", numbers and booleans their
 * usual text. For maps Java would print `{a=1, b=x}`, which nothing can parse
 * back; node-flow prints JSON instead (a deliberate difference).
 */
export function interpolationText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    // A cycle or a value too deep for V8's serializer: never throw from a template.
    return "null";
  }
}
