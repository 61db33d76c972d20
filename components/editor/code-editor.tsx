"use client";

import type { CompletionSource } from "@codemirror/autocomplete";
import { autocompletion } from "@codemirror/autocomplete";
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { HighlightStyle, StreamLanguage, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import type { StringStream, TagStyle } from "@codemirror/language";
import type { Diagnostic } from "@codemirror/lint";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import type { Extension } from "@codemirror/state";
import { Annotation, Compartment, EditorState, Prec, Transaction } from "@codemirror/state";
import { EditorView, keymap, placeholder as placeholderExtension } from "@codemirror/view";
import { basicSetup } from "codemirror";
import type { RefObject } from "react";
import { useEffect, useRef, useSyncExternalStore } from "react";

/** A problem shown inline: a lint-gutter marker and an underline over `from`…`to` (offsets into the value). */
export interface CodeDiagnostic {
  from: number;
  to: number;
  severity: "error" | "warning";
  message: string;
}

export interface CodeEditorProps {
  value: string;
  /** Every edit the user makes; never called for a `value` the parent pushed in. */
  onChange?: (value: string) => void;
  onBlur?: () => void;
  language: "json" | "javascript" | "jq" | "text";
  /** Set on the contenteditable, so `getByRole("textbox", { name })` finds it. */
  ariaLabel: string;
  readOnly?: boolean;
  /** Shown inline (lint gutter + underline), replaced whenever the prop changes. */
  diagnostics?: readonly CodeDiagnostic[];
  /** Replaces the language's own completions, e.g. expression completion. */
  completions?: CompletionSource;
  /** e.g. "6rem". */
  minHeight?: string;
  /** e.g. "60vh"; the editor scrolls inside it. */
  maxHeight?: string;
  className?: string;
  /** Beyond the base interface: one line, no gutters, Enter inserts nothing (pasted newlines become spaces). For `${…}` text fields. */
  singleLine?: boolean;
  /** Shown while the document is empty (e.g. the default the engine applies). */
  placeholder?: string;
}

/** Marks the transactions that push a new `value` in, so they do not echo back as onChange. */
const external = Annotation.define<boolean>();

/**
 * jq has no Lezer grammar; a stream tokenizer is enough for highlighting
 * (strings with `\(…)` left as string text, `$vars`, `.fields`, keywords, `#` comments).
 */
const JQ_KEYWORDS = new Set(["def", "if", "then", "elif", "else", "end", "as", "reduce", "foreach", "try", "catch", "label", "import", "include", "and", "or", "not", "__loc__"]);
const JQ_ATOMS = new Set(["true", "false", "null"]);
const jqLanguage = StreamLanguage.define<{ inString: boolean }>({
  name: "jq",
  startState: () => ({ inString: false }),
  token(stream: StringStream, state) {
    if (state.inString) {
      while (!stream.eol()) {
        const ch = stream.next();
        if (ch === "\\") stream.next();
        else if (ch === '"') {
          state.inString = false;
          break;
        }
      }
      return "string";
    }
    if (stream.eatSpace()) return null;
    if (stream.match("#")) {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match('"')) {
      state.inString = true;
      return "string";
    }
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return "number";
    if (stream.match(/^\$[A-Za-z_][A-Za-z0-9_]*/)) return "variableName";
    if (stream.match(/^\.[A-Za-z_][A-Za-z0-9_]*/)) return "propertyName";
    const word = stream.match(/^[A-Za-z_][A-Za-z0-9_]*/);
    if (word && typeof word !== "boolean") {
      const w = word[0];
      if (JQ_KEYWORDS.has(w)) return "keyword";
      if (JQ_ATOMS.has(w)) return "atom";
      return "variableName";
    }
    if (stream.match(/^(\|=|\+=|-=|\*=|\/=|\/\/=|\/\/|==|!=|<=|>=|\?\/\/|[|,+\-*/%<>=?])/)) return "operator";
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: "#" } },
});

function languageExtension(language: CodeEditorProps["language"]): Extension {
  switch (language) {
    case "json":
      return json();
    case "javascript":
      return javascript();
    case "jq":
      return jqLanguage;
    case "text":
      return [];
  }
}

/**
 * The dark palette is the default highlight style with each colour swapped for
 * one readable on the dark surface, so both themes highlight the same tokens
 * (and no second highlighting package is needed for the tag list).
 */
const DARK_COLORS: Readonly<Record<string, string>> = {
  "#404740": "#9ca3af",
  "#708": "#c792ea",
  "#219": "#82aaff",
  "#164": "#7fd1a7",
  "#a11": "#f2a97c",
  "#e40": "#ff9e64",
  "#00f": "#7aa2f7",
  "#30a": "#b4a7f5",
  "#085": "#4fd6be",
  "#167": "#7dcfff",
  "#256": "#89ddff",
  "#00c": "#7aa2f7",
  "#940": "#a8a29e",
  "#f00": "#ff6b6b",
};
const darkHighlightStyle = HighlightStyle.define(
  defaultHighlightStyle.specs.map((spec): TagStyle => (typeof spec.color === "string" && DARK_COLORS[spec.color] ? { ...spec, color: DARK_COLORS[spec.color] } : spec)),
);

// Colours come from HeroUI's CSS variables, so the editor sits in the app's
// light and dark surfaces like any other field; only `dark` (CodeMirror's own
// base styles) and the syntax palette need to know which one is active.
function themeExtension(dark: boolean): Extension {
  return [
    EditorView.theme(
      {
        "&": {
          backgroundColor: "var(--field-background, var(--default))",
          color: "var(--field-foreground, var(--foreground))",
          borderRadius: "var(--field-radius, 0.75rem)",
          border: "1px solid var(--border)",
          fontSize: "0.8125rem",
        },
        "&.cm-focused": { outline: "2px solid var(--focus)", outlineOffset: "1px" },
        ".cm-scroller": { fontFamily: "var(--font-mono)", lineHeight: "1.5", borderRadius: "inherit" },
        ".cm-content": { caretColor: "var(--foreground)", padding: "6px 0" },
        ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--foreground)" },
        "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection": {
          backgroundColor: "color-mix(in oklab, var(--accent) 28%, transparent)",
        },
        ".cm-gutters": {
          backgroundColor: "var(--surface-secondary, transparent)",
          color: "var(--muted)",
          border: "none",
          borderRight: "1px solid var(--separator, var(--border))",
          borderTopLeftRadius: "inherit",
          borderBottomLeftRadius: "inherit",
        },
        ".cm-activeLine": { backgroundColor: "color-mix(in oklab, var(--foreground) 4%, transparent)" },
        ".cm-activeLineGutter": { backgroundColor: "color-mix(in oklab, var(--foreground) 8%, transparent)", color: "var(--foreground)" },
        "&.cm-focused .cm-matchingBracket": { backgroundColor: "color-mix(in oklab, var(--accent) 25%, transparent)", outline: "1px solid color-mix(in oklab, var(--accent) 60%, transparent)" },
        "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: "color-mix(in oklab, var(--danger) 25%, transparent)" },
        ".cm-tooltip": {
          backgroundColor: "var(--overlay, var(--surface))",
          color: "var(--overlay-foreground, var(--foreground))",
          border: "1px solid var(--border)",
          borderRadius: "0.5rem",
          overflow: "hidden",
          boxShadow: "0 8px 24px rgb(0 0 0 / 0.12)",
        },
        ".cm-tooltip-autocomplete > ul": { fontFamily: "var(--font-mono)", maxHeight: "16rem" },
        ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "var(--accent-soft)", color: "var(--foreground)" },
        ".cm-completionDetail": { color: "var(--muted)", fontStyle: "normal", marginLeft: "0.75em" },
        ".cm-diagnostic": { padding: "4px 8px" },
        ".cm-diagnostic-error": { borderLeftColor: "var(--danger)" },
        ".cm-diagnostic-warning": { borderLeftColor: "var(--warning)" },
        ".cm-panels": { backgroundColor: "var(--surface-secondary)", color: "var(--foreground)" },
        ".cm-foldPlaceholder": { backgroundColor: "var(--default)", border: "none", color: "var(--muted)" },
        "&[data-readonly] .cm-content": { caretColor: "transparent" },
      },
      { dark },
    ),
    dark ? syntaxHighlighting(darkHighlightStyle) : syntaxHighlighting(defaultHighlightStyle),
  ];
}

function sizeExtension(minHeight: string | undefined, maxHeight: string | undefined): Extension {
  return EditorView.theme({
    "&": maxHeight ? { maxHeight } : {},
    ".cm-scroller": { overflow: "auto" },
    ".cm-content, .cm-gutter": minHeight ? { minHeight } : {},
  });
}

function readOnlyExtension(readOnly: boolean, ariaLabel: string): Extension {
  // Read-only keeps the content focusable (EditorView.editable stays true), so
  // keyboard users can still select and copy; only edits are refused.
  return [
    EditorState.readOnly.of(readOnly),
    EditorView.contentAttributes.of({ "aria-label": ariaLabel, ...(readOnly ? { "aria-readonly": "true" } : {}) }),
    EditorView.editorAttributes.of(readOnly ? { "data-readonly": "true" } : {}),
  ];
}

function modeExtension(singleLine: boolean, placeholder: string | undefined): Extension {
  const out: Extension[] = placeholder ? [placeholderExtension(placeholder)] : [];
  if (!singleLine) return out;
  out.push(
    // Highest: it overrides the base theme's active line and padding, whatever the extension order.
    Prec.highest(
      EditorView.theme({
        ".cm-gutters": { display: "none" },
        ".cm-activeLine": { backgroundColor: "transparent" },
        ".cm-content": { padding: "7px 4px" },
        ".cm-scroller": { overflowX: "auto", overflowY: "hidden" },
      }),
    ),
    // Below autocompletion's own Enter (Prec.highest), so Enter still accepts a suggestion.
    Prec.high(keymap.of([{ key: "Enter", run: () => true }])),
    EditorState.transactionFilter.of((tr) => {
      if (!tr.docChanged || tr.newDoc.lines === 1) return tr;
      const text = tr.newDoc.toString();
      const changes: { from: number; to: number; insert: string }[] = [];
      for (const match of text.matchAll(/\r?\n/g)) changes.push({ from: match.index, to: match.index + match[0].length, insert: " " });
      return [tr, { changes, sequential: true }];
    }),
  );
  return out;
}

function completionExtension(source: CompletionSource | undefined): Extension {
  return source ? autocompletion({ override: [source], activateOnTyping: true }) : [];
}

function toDiagnostics(diagnostics: readonly CodeDiagnostic[] | undefined, length: number): Diagnostic[] {
  if (!diagnostics) return [];
  return diagnostics.map((d) => {
    const from = Math.max(0, Math.min(d.from, length));
    const to = Math.max(from, Math.min(d.to, length));
    return { from, to, severity: d.severity, message: d.message };
  });
}

/** The smallest replacement turning `from` into `to` (common prefix and suffix kept), so the cursor outside it stays put. */
function minimalChange(from: string, to: string): { from: number; to: number; insert: string } {
  let start = 0;
  const max = Math.min(from.length, to.length);
  while (start < max && from.charCodeAt(start) === to.charCodeAt(start)) start++;
  let endFrom = from.length;
  let endTo = to.length;
  while (endFrom > start && endTo > start && from.charCodeAt(endFrom - 1) === to.charCodeAt(endTo - 1)) {
    endFrom--;
    endTo--;
  }
  return { from: start, to: endFrom, insert: to.slice(start, endTo) };
}

function subscribeToThemeClass(onChange: () => void): () => void {
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
  return () => observer.disconnect();
}

/** next-themes puts `dark` on <html>; watching the class follows it without depending on a provider being mounted. */
function useDarkClass(): boolean {
  return useSyncExternalStore(
    subscribeToThemeClass,
    () => document.documentElement.classList.contains("dark"),
    () => false,
  );
}

/**
 * A controlled CodeMirror 6 editor. The EditorView is created once per mount;
 * prop changes reconfigure it through compartments. A `value` that differs
 * from the document replaces it (as a minimal change, outside the undo
 * history) without calling onChange.
 */
export function CodeEditor({
  value,
  onChange,
  onBlur,
  language,
  ariaLabel,
  readOnly = false,
  diagnostics,
  completions,
  minHeight,
  maxHeight,
  className,
  singleLine = false,
  placeholder,
}: CodeEditorProps) {
  const hostRef = useRef<HTMLDivElement>(null);
  const viewRef = useRef<EditorView | null>(null);
  // The text the document holds as far as the props are concerned: comparing
  // against it avoids serialising a large document on every render.
  const knownValue = useRef(value);
  const onChangeRef = useRef(onChange);
  const onBlurRef = useRef(onBlur);
  const dark = useDarkClass();
  const compartments = useRef<Record<CompartmentName, Compartment> | null>(null);

  useEffect(() => {
    onChangeRef.current = onChange;
    onBlurRef.current = onBlur;
  });

  // Created once; the initial props are read through refs so this effect has no dependencies.
  const initial = useRef({ value, language, ariaLabel, readOnly, completions, minHeight, maxHeight, dark, diagnostics, singleLine, placeholder });
  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const init = initial.current;
    const c: Record<CompartmentName, Compartment> = {
      language: new Compartment(),
      theme: new Compartment(),
      size: new Compartment(),
      readOnly: new Compartment(),
      completions: new Compartment(),
      mode: new Compartment(),
    };
    compartments.current = c;
    const view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: knownValue.current,
        extensions: [
          basicSetup,
          lintGutter(),
          c.language.of(languageExtension(init.language)),
          c.theme.of(themeExtension(init.dark)),
          c.size.of(sizeExtension(init.minHeight, init.maxHeight)),
          c.readOnly.of(readOnlyExtension(init.readOnly, init.ariaLabel)),
          c.completions.of(completionExtension(init.completions)),
          c.mode.of(modeExtension(init.singleLine, init.placeholder)),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            if (update.transactions.every((tr) => tr.annotation(external) === true)) return;
            const text = update.state.doc.toString();
            knownValue.current = text;
            onChangeRef.current?.(text);
          }),
          EditorView.domEventHandlers({
            blur: () => {
              onBlurRef.current?.();
            },
          }),
        ],
      }),
    });
    if (init.diagnostics && init.diagnostics.length > 0) view.dispatch(setDiagnostics(view.state, toDiagnostics(init.diagnostics, view.state.doc.length)));
    viewRef.current = view;
    return () => {
      view.destroy();
      viewRef.current = null;
      compartments.current = null;
    };
  }, []);

  useEffect(() => {
    const view = viewRef.current;
    if (!view || value === knownValue.current) return;
    const current = view.state.doc.toString();
    knownValue.current = value;
    if (current === value) return;
    view.dispatch({ changes: minimalChange(current, value), annotations: [external.of(true), Transaction.addToHistory.of(false)] });
  }, [value]);

  useEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    view.dispatch(setDiagnostics(view.state, toDiagnostics(diagnostics, view.state.doc.length)));
  }, [diagnostics]);

  useReconfigure(viewRef, compartments, "language", language, () => languageExtension(language));
  useReconfigure(viewRef, compartments, "theme", dark, () => themeExtension(dark));
  useReconfigure(viewRef, compartments, "size", `${minHeight ?? ""}|${maxHeight ?? ""}`, () => sizeExtension(minHeight, maxHeight));
  useReconfigure(viewRef, compartments, "readOnly", `${readOnly}|${ariaLabel}`, () => readOnlyExtension(readOnly, ariaLabel));
  useReconfigure(viewRef, compartments, "completions", completions, () => completionExtension(completions));
  useReconfigure(viewRef, compartments, "mode", `${singleLine}|${placeholder ?? ""}`, () => modeExtension(singleLine, placeholder));

  // The host reserves the editor's height before it mounts, so the layout does not jump.
  return <div ref={hostRef} className={className} data-language={language} style={minHeight ? { minHeight } : undefined} />;
}

type CompartmentName = "language" | "theme" | "size" | "readOnly" | "completions" | "mode";

/** Reconfigures one compartment when `key` changes (skipping the first run: the view was created with it). */
function useReconfigure(
  viewRef: RefObject<EditorView | null>,
  compartments: RefObject<Record<CompartmentName, Compartment> | null>,
  name: CompartmentName,
  key: unknown,
  build: () => Extension,
) {
  const applied = useRef(key);
  const buildRef = useRef(build);
  useEffect(() => {
    buildRef.current = build;
  });
  useEffect(() => {
    const view = viewRef.current;
    const compartment = compartments.current?.[name];
    if (!view || !compartment || Object.is(applied.current, key)) return;
    applied.current = key;
    view.dispatch({ effects: compartment.reconfigure(buildRef.current()) });
  }, [viewRef, compartments, name, key]);
}
