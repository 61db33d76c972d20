/** Two letters for an avatar: from the display name's first and last words, else the email's local part. */
export function userInitials(user: { displayName: string | null; email: string }): string {
  const words = (user.displayName ?? "").trim().split(/\s+/).filter(Boolean);
  if (words.length >= 2) return `${words[0]?.[0] ?? ""}${words.at(-1)?.[0] ?? ""}`.toUpperCase();
  const source = words[0] ?? user.email.split("@")[0] ?? "";
  return source.slice(0, 2).toUpperCase() || "?";
}
