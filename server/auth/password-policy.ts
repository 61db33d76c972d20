/**
 * The one password rule set, used by owner setup, user creation and
 * `nf bootstrap`. Length does most of the work (NIST SP 800-63B: a minimum
 * length and a block list, no composition rules); the rest refuses what a
 * guesser tries first.
 */
export const MIN_PASSWORD_LENGTH = 12;
/** scrypt hashes any length, but a megabyte "password" is a request-size attack, not a secret. */
export const MAX_PASSWORD_LENGTH = 256;

// Lower-cased; a password is refused when it *is* one of these, or one of these
// with digits or punctuation around it ("Password123!").
const COMMON = [
  "password",
  "passw0rd",
  "qwerty",
  "qwertyuiop",
  "letmein",
  "welcome",
  "admin",
  "administrator",
  "changeme",
  "iloveyou",
  "monkey",
  "dragon",
  "football",
  "baseball",
  "sunshine",
  "trustno1",
  "nodeflow",
  "node-flow",
  "abcdefghijkl",
  "123456789012",
];

/** A reason the password is too weak, in a sentence a form can show; null when it is acceptable. */
export function checkPasswordStrength(password: string, context: { email?: string } = {}): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`;
  if (new Set(password).size < 5) return "The password repeats too few different characters.";
  const lower = password.toLowerCase();
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, "");
  if (COMMON.includes(lower) || COMMON.includes(core)) return "The password is too common.";
  if (/^\d+$/.test(password)) return "The password must not be only digits.";
  const email = context.email?.trim().toLowerCase();
  if (email) {
    const local = email.split("@")[0] ?? "";
    if (lower.includes(email) || (local.length >= 4 && lower.includes(local))) return "The password must not contain the email address.";
  }
  return null;
}
