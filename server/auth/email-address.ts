/**
 * The email rule for accounts: one @, something on each side, no spaces, at
 * most 254 characters (RFC 5321's path limit). Deliberately loose: the address
 * is a sign-in name here, not a mailbox we deliver to, and a stricter regex
 * only refuses real addresses.
 */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/** A reason the address is unusable, or null. */
export function checkEmailAddress(email: string): string | null {
  const trimmed = email.trim();
  if (trimmed.length === 0) return "Enter an email address.";
  if (trimmed.length > 254) return "The email address must be at most 254 characters long.";
  if (!EMAIL_PATTERN.test(trimmed)) return "Enter an email address like name@example.com.";
  return null;
}
