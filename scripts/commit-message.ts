/**
 * The house rules for a commit message, shared by the commit-msg hook
 * (.githooks/commit-msg) and the check of new commits in `npm test`
 * (scripts/check-commits.ts): a subject of at most 72 characters that says
 * what the commit does, and, when there is a body, a blank line before it.
 */

export const MAX_SUBJECT_LENGTH = 72;

/** What is wrong with a message, one line each; empty when it keeps the rules. */
export function commitMessageProblems(message: string): string[] {
  const lines = message
    .split("\n")
    .filter((line) => !line.startsWith("#"))
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === "") lines.shift();
  const subject = lines[0] ?? "";
  // What git writes itself: a merge, a revert, a fixup to squash later.
  if (/^(Merge |Revert "|fixup! |squash! )/.test(subject)) return [];
  const problems: string[] = [];
  if (subject === "") return ["the message is empty: give it a subject line saying what the commit does"];
  const length = [...subject].length;
  if (length > MAX_SUBJECT_LENGTH) problems.push(`the subject is ${length} characters long; keep it to ${MAX_SUBJECT_LENGTH} and move the rest into the body`);
  if (subject.endsWith(".")) problems.push("the subject ends with a full stop; drop it");
  if (/^[a-z]/.test(subject)) problems.push(`the subject starts in lower case; start it with a capital, in the imperative ("Add…", "Fix…")`);
  if (lines.length > 1 && lines[1] !== "") problems.push("the second line is not blank; leave one blank line between the subject and the body");
  return problems;
}
