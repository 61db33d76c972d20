/**
 * The executions list's search box: terms like `input.customer.id:42
 * output.ok:true input.name:"Ada Lovelace"`, each turned into JSON containment
 * on the run's input or output (listWorkflowExecutions' `contains`, answered
 * by the GIN jsonb_path_ops indexes). Terms are ANDed.
 *
 * A value is read as JSON when it parses (42, true, null, "quoted text"),
 * else as a bare string. A bare number or boolean also matches its string
 * form — `input.id:42` finds {"id":42} and {"id":"42"} — because a search box
 * cannot show the difference and ids arrive as either.
 */

export class InvalidSearchTermError extends Error {
  override name = "InvalidSearchTermError";
  constructor(
    readonly term: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ContainmentTerm {
  column: "input" | "output";
  /** Containment documents, any of which matches. */
  anyOf: unknown[];
}

const MAX_TERMS = 10;
const MAX_DEPTH = 16;
const KEY = /^[^\s."]+$/;

/** Whitespace-separated terms; a double-quoted value may hold spaces (and \" escapes). */
function tokenize(search: string): string[] {
  const terms: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < search.length; i++) {
    const ch = search[i] ?? "";
    if (quoted && ch === "\\" && i + 1 < search.length) {
      current += ch + (search[i + 1] ?? "");
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (!quoted && /\s/.test(ch)) {
      if (current !== "") terms.push(current);
      current = "";
      continue;
    }
    current += ch;
  }
  if (quoted) throw new InvalidSearchTermError(current, `Search term "${current}" has an unclosed quote`);
  if (current !== "") terms.push(current);
  return terms;
}

function nest(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/** Parses the search text; throws InvalidSearchTermError naming the first bad term. Empty text is no terms. */
export function parseExecutionSearch(search: string): ContainmentTerm[] {
  const terms = tokenize(search.trim());
  if (terms.length > MAX_TERMS) throw new InvalidSearchTermError(terms[MAX_TERMS] ?? "", `At most ${MAX_TERMS} search terms`);
  return terms.map((term) => {
    const colon = term.indexOf(":");
    if (colon < 0) throw new InvalidSearchTermError(term, `Search term "${term}" needs the form input.<path>:<value> or output.<path>:<value>`);
    const [column, ...path] = term.slice(0, colon).split(".");
    const raw = term.slice(colon + 1);
    if (column !== "input" && column !== "output") {
      throw new InvalidSearchTermError(term, `Search term "${term}" must start with input. or output.`);
    }
    if (path.length === 0 || path.length > MAX_DEPTH || path.some((key) => !KEY.test(key))) {
      throw new InvalidSearchTermError(term, `Search term "${term}" has an empty or malformed field path`);
    }
    if (raw === "") throw new InvalidSearchTermError(term, `Search term "${term}" has no value after ':'`);
    let value: unknown;
    let parsed = true;
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      parsed = false;
      if (raw.startsWith('"')) throw new InvalidSearchTermError(term, `Search term "${term}" has a malformed quoted value`);
      value = raw;
    }
    if (parsed && value !== null && typeof value === "object") {
      // {} or [] would contain-match nearly everything; a search box means a scalar.
      throw new InvalidSearchTermError(term, `Search term "${term}" must compare a field with a single value, not an object or array`);
    }
    const anyOf = [nest(path, value)];
    if (typeof value === "number" || typeof value === "boolean") anyOf.push(nest(path, raw));
    return { column, anyOf };
  });
}
