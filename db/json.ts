/**
 * The single funnel every JSONB write passes through.
 *
 * Postgres `jsonb` cannot store U+0000 inside a string: the insert fails with
 * "unsupported Unicode escape sequence" and a task that did its work could never
 * record its result. A NUL mid-text is a truncation marker or a fuzzer's leftover,
 * never content, so it is stripped here rather than failing the write.
 *
 * The same goes for a lone UTF-16 surrogate (a string cut in half mid-emoji by a
 * worker's `.slice()`): JSON.stringify escapes it as \udXXX and jsonb rejects
 * that as invalid input. It becomes U+FFFD, as any UTF-8 encoder would make it.
 *
 * Kysely cannot tell a plain object from an expression, so JSONB columns accept a
 * serialised string on write (see `Json` in schema.ts) and this makes the
 * serialisation explicit at every call site.
 */
export function json(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return "null";
  // JSON.stringify escapes U+0000 as the six characters \u0000 and a lone
  // surrogate as \udXXX (a paired one is emitted as the character itself); a
  // literal backslash before such text is itself escaped (\\u0000), so only
  // rewrite when the backslash count before the "u" is odd.
  if (!text.includes("\\u")) return text;
  return text.replace(/(?<!\\)((?:\\\\)*)\\u(0000|d[89a-f][0-9a-f]{2})/g, (_match, backslashes: string, code: string) =>
    code === "0000" ? backslashes : `${backslashes}\\ufffd`,
  );
}
