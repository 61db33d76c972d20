import type { Completion, CompletionContext, CompletionResult, CompletionSource } from "@codemirror/autocomplete";
import { NODE_TYPES, buildGraph, isNodeType } from "@/engine";
import type { DefinitionGraph, NodeType, WorkflowDefinition, WorkflowNode } from "@/engine";

/**
 * What `${…}` expressions can read at a node, for the inspector's
 * autocomplete: the workflow's own fields, its input (from the inputSchema's
 * properties), its variables, and the output of every node *upstream* of the
 * edited one — a downstream ref would resolve to null at run time, and the
 * validator rejects it (`expression-not-upstream`), so it is never offered.
 *
 * Pure: text and positions in, options out. The CodeMirror adapter at the end
 * is the only part that knows about the editor.
 */

/** One suggestion: the whole expression, `${…}` included. */
export interface ExpressionOption {
  /** What is inserted, e.g. `${workflow.input.customerId}`. */
  label: string;
  /** Shown beside the label: where the value comes from. */
  detail: string;
  kind: "workflow" | "input" | "variable" | "node";
}

/** Where the expression being typed starts and ends, and what of its body is typed so far. */
export interface ExpressionSpan {
  /** Offset of the `$`. */
  from: number;
  /** Offset the completion replaces up to: past the rest of the path and a closing `}` already there. */
  to: number;
  /** The body typed between `${` and the cursor ("" right after `$` or `${`). */
  typed: string;
}

/** The workflow fields a template may read (engine/expressions/expression-context.ts, WorkflowView). */
const WORKFLOW_FIELDS: readonly (readonly [string, string])[] = [
  ["input", "the workflow's input"],
  ["variables", "the workflow's variables"],
  ["workflowId", "this run's id"],
  ["workflowType", "the workflow's name"],
  ["version", "the definition's version"],
  ["correlationId", "set by whoever started the run"],
  ["startTime", "start of the run, epoch ms"],
  ["status", "the run's status"],
  ["parentWorkflowId", "set when started as a sub-workflow"],
  ["parentWorkflowTaskId", "set when started as a sub-workflow"],
];

/** Output fields worth naming per node type (what each system task writes). */
const OUTPUT_FIELDS: Partial<Record<NodeType, readonly string[]>> = {
  HTTP: ["response", "response.body", "response.statusCode", "response.headers"],
  HTTP_POLL: ["response", "response.body", "response.statusCode", "pollCount"],
  JDBC: ["result"],
  LIST_MCP_TOOLS: ["tools"],
  CALL_MCP_TOOL: ["content", "structuredContent", "isError", "text"],
  LLM_CHAT_COMPLETE: ["result", "finishReason", "toolCalls", "tokenUsage", "latencyMs"],
  LLM_TEXT_COMPLETE: ["result", "finishReason", "tokenUsage", "latencyMs"],
  LLM_GENERATE_EMBEDDINGS: ["result", "dimensions", "tokenUsage", "latencyMs"],
  LLM_INDEX_TEXT: ["docId", "chunks", "tokenUsage", "latencyMs"],
  LLM_SEARCH_INDEX: ["result", "tokenUsage", "latencyMs"],
  INLINE: ["result"],
  JSON_JQ_TRANSFORM: ["result", "resultList"],
  HUMAN: ["outcome"],
  DO_WHILE: ["iteration"],
  START_WORKFLOW: ["workflowId"],
  SUB_WORKFLOW: ["subWorkflowId"],
};

/** How deep nested inputSchema properties are offered (`workflow.input.a.b.c`). */
const MAX_INPUT_DEPTH = 3;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A path step as JSONPath writes it: `.key`, or `['odd key']` when the key is not an identifier. */
function step(key: string): string {
  return IDENTIFIER.test(key) ? `.${key}` : `['${key.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}']`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function inputSchemaPaths(schema: unknown, prefix: string, depth: number, out: ExpressionOption[]): void {
  if (!isRecord(schema) || depth > MAX_INPUT_DEPTH) return;
  const properties = schema.properties;
  if (!isRecord(properties)) return;
  for (const [key, property] of Object.entries(properties)) {
    const path = `${prefix}${step(key)}`;
    const title = isRecord(property) && typeof property.title === "string" ? property.title : "workflow input";
    out.push({ label: `\${${path}}`, detail: title, kind: "input" });
    inputSchemaPaths(property, path, depth + 1, out);
  }
}

/** `${workflow.…}` options: the fixed fields, every inputSchema property and every known variable. */
export function workflowOptions(definition: Pick<WorkflowDefinition, "inputSchema" | "variables">, variableKeys: Iterable<string> = []): ExpressionOption[] {
  const out: ExpressionOption[] = [];
  const inputs: ExpressionOption[] = [];
  inputSchemaPaths(definition.inputSchema, "workflow.input", 1, inputs);
  const variables = new Set<string>([...Object.keys(definition.variables ?? {}), ...variableKeys]);
  out.push(...inputs);
  for (const key of variables) out.push({ label: `\${workflow.variables${step(key)}}`, detail: "workflow variable", kind: "variable" });
  for (const [field, detail] of WORKFLOW_FIELDS) out.push({ label: `\${workflow.${field}}`, detail, kind: "workflow" });
  return out;
}

/** `${ref.output…}` options for the given nodes, in the order given. */
export function nodeOptions(nodes: Iterable<Pick<WorkflowNode, "ref" | "type">>): ExpressionOption[] {
  const out: ExpressionOption[] = [];
  for (const node of nodes) {
    const base = IDENTIFIER.test(node.ref) ? node.ref : `['${node.ref}']`;
    const detail = isNodeType(node.type) ? NODE_TYPES[node.type].label : node.type;
    out.push({ label: `\${${base}.output}`, detail, kind: "node" });
    for (const field of (isNodeType(node.type) ? OUTPUT_FIELDS[node.type] : undefined) ?? []) {
      out.push({ label: `\${${base}.output.${field}}`, detail, kind: "node" });
    }
    out.push({ label: `\${${base}.input}`, detail, kind: "node" });
  }
  return out;
}

/**
 * Every option for an expression inside node `ref` (or, with `ref` null, for
 * the workflow's output, which is built once every node has finished).
 * `upstream` comes from {@link createUpstreamIndex}.
 */
export function expressionOptions(definition: WorkflowDefinition, ref: string | null, upstream: ReadonlySet<string> | null): ExpressionOption[] {
  const readable = definition.nodes.filter((n) => n.ref !== ref && (upstream === null || upstream.has(n.ref)));
  // Variables a SET_VARIABLE upstream sets exist by the time this node runs.
  const setVariables = readable.filter((n) => n.type === "SET_VARIABLE").flatMap((n) => Object.keys(n.input ?? {}));
  return [...workflowOptions(definition, setVariables), ...nodeOptions(readable)];
}

/**
 * Upstream sets, computed lazily and cached while the graph's structure (refs,
 * types, parents, edges) is unchanged — so typing in a field, which changes
 * the definition object on every keystroke, rebuilds nothing; and nothing is
 * built at all until a completion is asked for.
 */
export function createUpstreamIndex(): (definition: WorkflowDefinition, ref: string) => ReadonlySet<string> {
  let edges: WorkflowDefinition["edges"] | undefined;
  let signature: string | undefined;
  let graph: DefinitionGraph | undefined;
  const cache = new Map<string, ReadonlySet<string>>();
  return (definition, ref) => {
    const nextSignature = structureSignature(definition.nodes);
    if (graph === undefined || definition.edges !== edges || nextSignature !== signature) {
      graph = buildGraph(definition);
      edges = definition.edges;
      signature = nextSignature;
      cache.clear();
    }
    let found = cache.get(ref);
    if (found === undefined) {
      found = graph.has(ref) ? graph.upstreamRefs(ref) : new Set<string>();
      cache.set(ref, found);
    }
    return found;
  };
}

/** What the graph depends on in the nodes: the rest of each node's config does not move an edge. */
export function structureSignature(nodes: readonly Pick<WorkflowNode, "ref" | "type" | "parent">[]): string {
  let s = "";
  for (const n of nodes) s += `${n.ref}\u0000${n.type}\u0000${n.parent ?? ""}\u0001`;
  return s;
}

/**
 * The expression the cursor at `pos` is typing, or null outside one. Inside
 * `${…` (nested ones included: the innermost counts), or right after a lone
 * `$`. `$${` is Conductor's escape for a literal `${` and starts nothing.
 */
export function expressionSpanAt(text: string, pos: number): ExpressionSpan | null {
  let from = -1;
  for (let i = pos - 1; i >= 0; i--) {
    const ch = text[i];
    if (ch === "}" || ch === '"' || ch === "\n") break;
    if (ch === "{" && text[i - 1] === "$") {
      from = i - 1;
      break;
    }
  }
  let typed: string;
  if (from >= 0) {
    if (text[from - 1] === "$") return null;
    typed = text.slice(from + 2, pos);
  } else if (pos > 0 && text[pos - 1] === "$" && text[pos - 2] !== "$") {
    from = pos - 1;
    typed = "";
  } else {
    return null;
  }
  // Replace the rest of the path after the cursor too, and a `}` already
  // there (closeBrackets inserts one after `{`), so accepting never leaves `}}`.
  let to = pos;
  while (to < text.length && /[A-Za-z0-9_.$[\]'-]/.test(text[to]!)) to++;
  if (text[to] === "}") to++;
  return { from, to, typed };
}

/**
 * The options matching what is typed: those whose body starts with it first,
 * then those containing it anywhere (typing `${cust` finds
 * `${workflow.input.customerId}`), each group in the given order.
 */
export function matchOptions(options: readonly ExpressionOption[], typed: string): ExpressionOption[] {
  const needle = typed.toLowerCase();
  if (needle === "") return [...options];
  const starts: ExpressionOption[] = [];
  const contains: ExpressionOption[] = [];
  for (const option of options) {
    const body = option.label.slice(2, -1).toLowerCase();
    if (body.startsWith(needle)) starts.push(option);
    else if (body.includes(needle)) contains.push(option);
  }
  return [...starts, ...contains];
}

/**
 * At most this many options go to the popup: with 1,000 nodes upstream there
 * are several thousand, the popup shows a hundred, and handing CodeMirror all
 * of them costs tens of milliseconds a keystroke. The best (prefix) matches come first.
 */
export const MAX_OPTIONS = 250;

/** Completion for `text` at `pos`: the span to replace and the matching options, or null. */
export function completeExpression(text: string, pos: number, options: readonly ExpressionOption[], explicit = false): { from: number; to: number; options: ExpressionOption[] } | null {
  const span = expressionSpanAt(text, pos);
  if (span === null) return explicit ? { from: pos, to: pos, options: options.slice(0, MAX_OPTIONS) } : null;
  const matched = matchOptions(options, span.typed);
  return matched.length === 0 ? null : { from: span.from, to: span.to, options: matched.slice(0, MAX_OPTIONS) };
}

const KIND_TYPE: Record<ExpressionOption["kind"], string> = { workflow: "keyword", input: "property", variable: "variable", node: "class" };

/**
 * A CodeMirror completion source over {@link completeExpression}. `options` is
 * called when a completion is asked for (never per keystroke elsewhere), so it
 * can read the latest definition through a ref. `words` are plain values
 * offered outside `${…}` (an HTTP method's enum).
 */
export function expressionCompletionSource(options: () => readonly ExpressionOption[], words: readonly string[] = []): CompletionSource {
  return (context: CompletionContext): CompletionResult | null => {
    const line = context.state.doc.lineAt(context.pos);
    const lineText = line.text;
    const pos = context.pos - line.from;
    const span = expressionSpanAt(lineText, pos);
    if (span === null && words.length > 0) {
      const word = context.matchBefore(/[A-Za-z]*/);
      if (word && (word.from !== word.to || context.explicit)) {
        return { from: word.from, options: words.map((w): Completion => ({ label: w, type: "constant" })), validFor: /^[A-Za-z]*$/ };
      }
    }
    const result = completeExpression(lineText, pos, options(), context.explicit);
    if (result === null) return null;
    return {
      from: line.from + result.from,
      to: line.from + result.to,
      filter: false,
      options: result.options.map((o, i): Completion => ({ label: o.label, detail: o.detail, type: KIND_TYPE[o.kind], boost: -i / 1000 })),
    };
  };
}
