import { parse as parseLenient, printParseErrorCode } from "jsonc-parser";
import type { ParseError } from "jsonc-parser";
import { NameSchema, importConductorWorkflow, validateDefinition } from "@/engine";
import type { WorkflowDefinition } from "@/engine";

/**
 * What the Workflows page's Import dialog does with a file, without React:
 * parse the text (a syntax error comes back with its line and column),
 * recognise node-flow graph JSON or a Conductor WorkflowDef, convert the
 * latter with the engine's importer, and validate — all in the browser, with
 * the same engine code the server runs, so what the dialog accepts the save
 * accepts.
 */

/** The two formats a file can hold. */
export type ImportFormat = "node-flow" | "conductor";

/** One reason the file cannot be saved, located for people. */
export interface ImportIssue {
  message: string;
  /** Where: a JSON path like `tasks[2].decisionCases.big[0].type`, or `line 3, column 7` for a syntax error. */
  location: string | null;
  /** The node (or Conductor task) it belongs to. */
  ref: string | null;
  code: string | null;
}

/** A file parsed as JSON: the value, or where the syntax broke. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; issue: ImportIssue };

export type ImportVerdict =
  /** Ready to save: the definition as it will be stored (name applied), and what the Conductor import changed. */
  | { ok: true; format: ImportFormat; definition: WorkflowDefinition; warnings: ImportIssue[] }
  /** Not savable; `format` is null when the file is neither format (or not JSON). */
  | { ok: false; format: ImportFormat | null; issues: ImportIssue[]; warnings: ImportIssue[] };

/** `nodes[3].input.url`: the path as a person reads it. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/** Line and column (both from 1) of a character offset in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

// Keyed by printParseErrorCode's names: ParseErrorCode is a const enum, which isolated modules cannot read.
const PARSE_ERROR_WORDS: Readonly<Record<string, string>> = {
  InvalidSymbol: "Unexpected character",
  InvalidNumberFormat: "Malformed number",
  PropertyNameExpected: "Expected a property name in double quotes",
  ValueExpected: "Expected a value",
  ColonExpected: "Expected ':'",
  CommaExpected: "Expected ','",
  CloseBraceExpected: "Expected '}'",
  CloseBracketExpected: "Expected ']'",
  EndOfFileExpected: "Unexpected text after the JSON value",
  InvalidCommentToken: "Comments are not JSON",
  UnexpectedEndOfComment: "Comments are not JSON",
  UnexpectedEndOfString: "Unterminated string",
  UnexpectedEndOfNumber: "Malformed number",
  InvalidUnicode: "Invalid \\u escape",
  InvalidEscapeCharacter: "Invalid escape character",
  InvalidCharacter: "Invalid character in a string",
};

/**
 * JSON.parse, with a location when it fails. Browsers word (and locate) their
 * JSON.parse errors differently, and recent V8 gives no position at all, so
 * the location comes from jsonc-parser's scanner in strict mode: the first
 * error it reports, as line and column.
 */
export function parseJsonText(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const errors: ParseError[] = [];
    parseLenient(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    if (text.trim() === "") return { ok: false, issue: { message: "The file is empty", location: null, ref: null, code: "not-json" } };
    if (first === undefined) {
      // jsonc-parser accepted what JSON.parse refused (a lone surrogate, say): keep the browser's words.
      return { ok: false, issue: { message: error instanceof Error ? error.message : String(error), location: null, ref: null, code: "not-json" } };
    }
    const { line, column } = lineAndColumn(text, first.offset);
    const code = printParseErrorCode(first.error);
    const words = PARSE_ERROR_WORDS[code] ?? code;
    return { ok: false, issue: { message: `Not valid JSON: ${words}`, location: `line ${line}, column ${column}`, ref: null, code: "not-json" } };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Which format a parsed file holds: node-flow graphs carry `schemaVersion`
 * and `nodes`; a Conductor WorkflowDef carries `tasks`. Null for neither.
 */
export function detectFormat(value: unknown): ImportFormat | null {
  if (!isObject(value)) return null;
  if ("schemaVersion" in value && "nodes" in value) return "node-flow";
  if ("tasks" in value) return "conductor";
  return null;
}

/** The name a file proposes for the workflow, if it has a usable one. */
export function proposedName(value: unknown): string {
  return isObject(value) && typeof value.name === "string" ? value.name : "";
}

/** Checks a name the user typed, with the engine's rule; null when it is fine. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "Give the workflow a name";
  const result = NameSchema.safeParse(name);
  return result.success ? null : (result.error.issues[0]?.message ?? "Not a valid name");
}

/**
 * Converts and validates a parsed file under the name the user chose. The
 * name is applied to the file's own JSON before conversion, so a problem
 * about the file's name disappears once a good one is chosen, and a
 * Conductor import's nested sub-workflows keep their own names.
 */
export function convertImport(value: unknown, name: string): ImportVerdict {
  const format = detectFormat(value);
  if (format === null || !isObject(value)) {
    return {
      ok: false,
      format: null,
      issues: [
        {
          message: "This is neither a node-flow workflow (an object with schemaVersion and nodes) nor a Conductor WorkflowDef (an object with tasks)",
          location: null,
          ref: null,
          code: "unknown-format",
        },
      ],
      warnings: [],
    };
  }
  const named = { ...value, name };
  if (format === "conductor") {
    const result = importConductorWorkflow(named);
    const warnings = result.warnings.map((w) => ({ message: w.message, location: w.path.length > 0 ? formatPath(w.path) : null, ref: w.ref ?? null, code: w.code }));
    if (!result.ok) {
      return {
        ok: false,
        format,
        issues: result.problems.map((p) => ({ message: p.message, location: p.path.length > 0 ? formatPath(p.path) : null, ref: p.ref ?? null, code: p.code })),
        warnings,
      };
    }
    return { ok: true, format, definition: result.definition, warnings };
  }
  const result = validateDefinition(named);
  if (!result.ok) {
    return {
      ok: false,
      format,
      issues: result.problems.map((p) => ({ message: p.message, location: p.path.length > 0 ? formatPath(p.path) : null, ref: p.ref ?? null, code: p.code })),
      warnings: [],
    };
  }
  // Warnings (a node that never runs, …) do not stop the import: the editor marks them on the nodes.
  const warnings = result.warnings.map((p) => ({ message: p.message, location: p.path.length > 0 ? formatPath(p.path) : null, ref: p.ref ?? null, code: p.code }));
  return { ok: true, format, definition: result.definition, warnings };
}
