/**
 * The single funnel every JSONB write passes through.
 *
 * Postgres `jsonb` cannot store U+0000 inside a string: the insert fails with
 * "unsupported Unicode escape sequence" and a task that did its work could never
 * record its result. A NUL mid-text is a truncation marker or a fuzzer's leftover,
 * never content, so it is stripped here rather than failing the write.
 *
 * Kysely cannot tell a plain object from an expression, so JSONB columns accept a
 * serialised string on write (see `Json` in schema.ts) and this makes the
 * serialisation explicit at every call site.
 */
export function json(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return "null";
  // JSON.stringify always escapes U+0000 as the six characters \u0000; a literal
  // backslash before it is itself escaped (\\u0000), so only strip when the
  // backslash count before "u0000" is odd.
  return text.includes("\\u0000") ? text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, "$1") : text;
}
