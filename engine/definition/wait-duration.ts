/**
 * The text forms a WAIT (and a HUMAN task's `dueIn`) accepts, as Conductor's
 * DateTimeUtils parses them. Pure string handling: turning an `until` into an
 * instant needs a time zone database and is the runtime's job.
 */

/** Longest duration or timestamp text accepted; real ones are under 40 characters. */
export const MAX_WAIT_TEXT_LENGTH = 64;

// Units in Conductor's order (days, hours, minutes, seconds), each optional, at
// least one present. Every group starts with a digit, so the `\s*` runs cannot
// trade characters and the match is linear.
const DURATION =
  /^\s*(?:(\d+)\s*(?:days?|d)\s*)?(?:(\d+)\s*(?:hours?|hrs?|h)\s*)?(?:(\d+)\s*(?:minutes?|mins?|m)\s*)?(?:(\d+)\s*(?:seconds?|secs?|s)\s*)?$/i;

// ISO-8601 (`2030-01-31T09:30:00Z`, with offset or fraction) and Conductor's
// `yyyy-MM-dd`, `yyyy-MM-dd HH:mm`, `yyyy-MM-dd HH:mm z` forms.
const UNTIL = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?: ?(?:Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_/+-]{0,40}))?)?$/;

/** True when a string holds a `${…}` expression, so its final value is only known at run time. */
export function containsExpression(text: string): boolean {
  return text.includes("${");
}

/**
 * Seconds in a duration such as `"10s"`, `"5m"`, `"1h 30m"`, `"2 days"`;
 * null when the text is not one (or is empty of units).
 */
export function parseWaitDuration(text: string): number | null {
  if (text.length > MAX_WAIT_TEXT_LENGTH) return null;
  const match = DURATION.exec(text);
  if (match === null) return null;
  const [, d, h, m, s] = match;
  if (d === undefined && h === undefined && m === undefined && s === undefined) return null;
  const n = (v: string | undefined): number => (v === undefined ? 0 : Number(v));
  return ((n(d) * 24 + n(h)) * 60 + n(m)) * 60 + n(s);
}

/** True when `text` is a timestamp form WAIT's `until` accepts (syntax only; see the module comment). */
export function isWaitUntil(text: string): boolean {
  return text.length <= MAX_WAIT_TEXT_LENGTH && UNTIL.test(text);
}
