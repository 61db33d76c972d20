/**
 * JSON fields of the inspector: the text a value is shown as, and the value a
 * text means — or where and why it is not JSON, for the inline marker. The
 * field keeps the last valid value while the text is broken.
 */

export interface JsonSyntaxError {
  /** Offsets into the text for the underline. */
  from: number;
  to: number;
  /** Says where too (line and column), for screen readers and the field's error text. */
  message: string;
}

export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: JsonSyntaxError };

/** The text a value is edited as: pretty-printed; nothing for an absent value. */
export function formatJson(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

/**
 * Parses a field's text. Blank means "no value" (the key is removed).
 * `JSON.parse` decides validity; only when it refuses does a small scanner
 * find the position, because V8's messages name one only for some errors.
 */
export function parseJson(text: string, expectObject = false): JsonParseResult {
  if (text.trim() === "") return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: locateError(text) };
  }
  if (expectObject && (typeof value !== "object" || value === null || Array.isArray(value))) {
    const start = text.length - text.trimStart().length;
    return { ok: false, error: { from: start, to: text.trimEnd().length, message: "Expected a JSON object: { \"key\": value, … }" } };
  }
  return { ok: true, value };
}

function lineColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

class ScanError extends Error {
  constructor(
    readonly at: number,
    readonly what: string,
  ) {
    super(what);
  }
}

/** Finds the first syntax error of text JSON.parse refused. */
export function locateError(text: string): JsonSyntaxError {
  let pos = 0;
  const ws = () => {
    while (pos < text.length && /\s/.test(text[pos]!)) pos++;
  };
  const fail = (what: string): never => {
    throw new ScanError(pos, what);
  };
  const string = () => {
    pos++; // opening quote
    while (pos < text.length) {
      const ch = text[pos]!;
      if (ch === '"') {
        pos++;
        return;
      }
      if (ch === "\\") {
        const next = text[pos + 1];
        if (next === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) fail("Invalid \\u escape");
          pos += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) pos += 2;
        else fail("Invalid escape in a string");
        continue;
      }
      if (ch.charCodeAt(0) < 0x20) fail("Unescaped control character in a string");
      pos++;
    }
    fail("Unterminated string");
  };
  const value = (depth: number): void => {
    if (depth > 500) fail("Nested too deeply");
    ws();
    const ch = text[pos];
    if (ch === undefined) fail("Unexpected end: a value is missing");
    if (ch === "{") {
      pos++;
      ws();
      if (text[pos] === "}") {
        pos++;
        return;
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') fail("Expected a property name in double quotes");
        string();
        ws();
        if (text[pos] !== ":") fail("Expected ':' after the property name");
        pos++;
        value(depth + 1);
        ws();
        if (text[pos] === ",") {
          pos++;
          continue;
        }
        if (text[pos] === "}") {
          pos++;
          return;
        }
        fail(text[pos] === undefined ? "Unexpected end: '}' is missing" : "Expected ',' or '}'");
      }
    }
    if (ch === "[") {
      pos++;
      ws();
      if (text[pos] === "]") {
        pos++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[pos] === ",") {
          pos++;
          continue;
        }
        if (text[pos] === "]") {
          pos++;
          return;
        }
        fail(text[pos] === undefined ? "Unexpected end: ']' is missing" : "Expected ',' or ']'");
      }
    }
    if (ch === '"') return string();
    const literal = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(pos, pos + 400));
    if (literal) {
      pos += literal[0].length;
      return;
    }
    fail(ch === "'" ? "Strings take double quotes" : "Expected a value (a string in double quotes, number, object, array, true, false or null)");
  };
  try {
    value(0);
    ws();
    if (pos < text.length) fail("Unexpected text after the value");
  } catch (error) {
    if (error instanceof ScanError) {
      const to = Math.min(text.length, error.at + Math.max(1, /^[^\s,:{}[\]"]*/.exec(text.slice(error.at))?.[0].length ?? 1));
      return { from: error.at, to: Math.max(to, error.at), message: `${error.what} (${lineColumn(text, error.at)})` };
    }
  }
  // The scanner accepted what JSON.parse refused (e.g. a lone surrogate quirk): mark the whole text.
  return { from: 0, to: text.length, message: "Not valid JSON" };
}
