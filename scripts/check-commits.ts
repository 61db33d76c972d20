import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { commitMessageProblems } from "./commit-message";

/**
 * Checks commit messages against the house rules (commit-message.ts).
 *
 *   tsx scripts/check-commits.ts --message-file F   the commit-msg hook: the message being written
 *   tsx scripts/check-commits.ts                    npm test: every commit since the rules began
 *
 * The rules hold from RULES_SINCE on; older history is left as it was. A
 * shallow clone that lacks that commit checks HEAD alone, and a tree outside
 * git (an unpacked tarball, a Docker build context) has nothing to check.
 */
const RULES_SINCE = "7e707095cb77d410347cca7215c8e075b8a30288";

function git(args: string[]): string | null {
  try {
    return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

function checkMessageFile(path: string): number {
  const problems = commitMessageProblems(readFileSync(path, "utf8"));
  if (problems.length === 0) return 0;
  console.error(`Commit refused: ${problems.join("; ")}.`);
  console.error(`Your message is kept in ${path}; \`git commit -e -F ${path}\` opens it again.`);
  return 1;
}

function checkHistory(): number {
  if (git(["rev-parse", "--is-inside-work-tree"])?.trim() !== "true") {
    console.log("check-commits: not a git work tree; no commits to check.");
    return 0;
  }
  const hasBaseline = git(["cat-file", "-e", `${RULES_SINCE}^{commit}`]) !== null;
  const range = hasBaseline ? [`${RULES_SINCE}..HEAD`] : ["-1", "HEAD"];
  const log = git(["log", "--no-merges", "--format=%H%x00%B%x00", ...range]) ?? "";
  const fields = log.split("\0");
  let checked = 0;
  const bad: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const hash = fields[i]!.trim();
    const problems = commitMessageProblems(fields[i + 1]!);
    checked++;
    if (problems.length > 0) bad.push(`  ${hash.slice(0, 10)} ${fields[i + 1]!.trim().split("\n")[0]}\n    ${problems.join("\n    ")}`);
  }
  const scope = hasBaseline ? `since ${RULES_SINCE.slice(0, 7)}` : "(HEAD only: the history before it is not in this clone)";
  if (bad.length === 0) {
    console.log(`check-commits: ${checked} commit message(s) ${scope} keep the rules.`);
    return 0;
  }
  console.error(`check-commits: ${bad.length} of ${checked} commit message(s) ${scope} break the rules:\n${bad.join("\n")}`);
  console.error("Reword them before they land (git rebase -i, then `reword`).");
  return 1;
}

const at = process.argv.indexOf("--message-file");
const file = at === -1 ? undefined : process.argv[at + 1];
process.exitCode = at === -1 ? checkHistory() : file === undefined ? (console.error("--message-file needs a path"), 2) : checkMessageFile(file);
