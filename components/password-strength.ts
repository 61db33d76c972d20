/**
 * A hint while typing, not the rule: the server's password policy decides
 * (server/auth/password-policy.ts), and its message is shown next to the field
 * when it refuses. Length counts most, as it does there; mixing kinds of
 * character adds a little.
 */
export interface PasswordStrength {
  /** 0 (refused for sure) to 4. */
  score: 0 | 1 | 2 | 3 | 4;
  label: string;
  color: "danger" | "warning" | "accent" | "success";
}

export function estimatePasswordStrength(password: string, minLength: number): PasswordStrength {
  if (password.length < minLength) {
    const missing = minLength - password.length;
    return { score: 0, label: `${missing} more character${missing === 1 ? "" : "s"} needed`, color: "danger" };
  }
  if (new Set(password).size < 5) return { score: 0, label: "Too repetitive", color: "danger" };
  const kinds = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  let score = 1;
  if (password.length >= minLength + 4) score++;
  if (password.length >= minLength + 10) score++;
  if (kinds >= 3) score++;
  const clamped = Math.min(score, 4) as 1 | 2 | 3 | 4;
  const display = {
    1: { label: "Acceptable", color: "warning" },
    2: { label: "Good", color: "accent" },
    3: { label: "Strong", color: "success" },
    4: { label: "Very strong", color: "success" },
  } as const;
  return { score: clamped, ...display[clamped] };
}
