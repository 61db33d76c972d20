import pino from "pino";
import type { DestinationStream, Logger, LoggerOptions } from "pino";
import type { Config } from "./config";

export type { Logger } from "pino";

export type LogFormat = "pretty" | "json";

export interface LoggerSettings {
  level: Config["logLevel"];
  /** `pretty` (default) is one readable line per entry; `json` is pino's own NDJSON for log shippers. */
  format?: LogFormat;
  /** Where lines go; stdout when omitted. Tests pass their own. */
  destination?: { write(line: string): unknown };
  /** Fields bound to every line, e.g. `{ process: "worker" }`. */
  base?: Record<string, unknown>;
}

/**
 * Field names whose values never reach a log line. fast-redact (pino's redactor)
 * has no "any depth" wildcard, so each name is listed at the top level and one
 * and two levels down: that covers `{ password }`, `{ config: { secret } }` and
 * `{ req: { headers: { authorization } } }`, which is where these turn up.
 */
const SENSITIVE_KEYS = [
  "password",
  "secret",
  "token",
  "apiKey",
  "passwordHash",
  "tokenHash",
  "keyHash",
  "authorization",
  "cookie",
  "set-cookie",
  "databaseUrl",
  "connectionString",
  "DATABASE_URL",
  "NODE_FLOW_SECRET",
];

// Bracket notation throughout, so keys with a hyphen (set-cookie) parse too.
export const REDACT_PATHS = SENSITIVE_KEYS.flatMap((key) => [`["${key}"]`, `*["${key}"]`, `*.*["${key}"]`]);

const LEVEL_LABELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO ",
  40: "WARN ",
  50: "ERROR",
  60: "FATAL",
};

// pino's own bookkeeping fields; everything else on the entry is printed as key=value.
const OMITTED_KEYS = new Set(["level", "time", "msg", "pid", "hostname", "err"]);

function formatValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  // JSON.stringify gives undefined for undefined, functions and symbols.
  return JSON.stringify(value) ?? typeof value;
}

function formatTime(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

interface SerializedError {
  type?: string;
  message?: string;
  stack?: string;
}

/**
 * Turns one of pino's JSON lines into `12:00:01.234 INFO  message key=value`.
 * An error's stack follows on indented lines: a stack squeezed onto one line is
 * unreadable, and the `[worker]` prefixer in `nf start` prefixes each line anyway.
 */
export function formatPrettyLine(jsonLine: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith("\n") ? jsonLine : `${jsonLine}\n`;
  }
  const level = typeof entry.level === "number" ? (LEVEL_LABELS[entry.level] ?? String(entry.level)) : "INFO ";
  const time = typeof entry.time === "number" ? formatTime(entry.time) : "";
  const message = typeof entry.msg === "string" ? entry.msg : "";
  const fields = Object.entries(entry)
    .filter(([key]) => !OMITTED_KEYS.has(key))
    .map(([key, value]) => `${key}=${formatValue(value)}`);
  const err = entry.err as SerializedError | undefined;
  if (err && typeof err === "object") fields.push(`err=${formatValue(err.message ?? "")}`);
  let line = [time, level, message, ...fields].filter((part) => part !== "").join(" ");
  if (err?.stack) {
    // The stack's first line repeats the message already printed as err=…
    const frames = err.stack.split("\n").slice(1).map((frame) => `    ${frame.trim()}`);
    if (frames.length > 0) line += `\n${frames.join("\n")}`;
  }
  return `${line}\n`;
}

export function createLogger(settings: LoggerSettings): Logger {
  const format = settings.format ?? "pretty";
  const target = settings.destination ?? process.stdout;
  const options: LoggerOptions = {
    level: settings.level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    // pid and hostname are noise on one machine and known to the orchestrator elsewhere.
    base: settings.base ?? null,
    timestamp: format === "json" ? pino.stdTimeFunctions.isoTime : pino.stdTimeFunctions.epochTime,
  };
  // pino writes each entry with one synchronous write() call, so a plain object
  // stream can reformat line by line without a worker thread (pino-pretty would
  // need one, plus a dependency).
  const stream: DestinationStream =
    format === "json"
      ? { write: (line: string) => void target.write(line) }
      : { write: (line: string) => void target.write(formatPrettyLine(line)) };
  return pino(options, stream);
}
