import { describe, expect, it } from "vitest";
import { commitMessageProblems, MAX_SUBJECT_LENGTH } from "./commit-message";

describe("commitMessageProblems", () => {
  it("accepts a short imperative subject, with or without a body", () => {
    expect(commitMessageProblems("Add the fault suite\n")).toEqual([]);
    expect(commitMessageProblems("Add the fault suite\n\nWhy it is needed.\n")).toEqual([]);
  });

  it("counts characters, not bytes, and allows exactly the limit", () => {
    expect(commitMessageProblems("é".repeat(MAX_SUBJECT_LENGTH))).toEqual([]);
    expect(commitMessageProblems("A".repeat(MAX_SUBJECT_LENGTH + 1))).toEqual([
      `the subject is ${MAX_SUBJECT_LENGTH + 1} characters long; keep it to ${MAX_SUBJECT_LENGTH} and move the rest into the body`,
    ]);
  });

  it("ignores the comment lines git puts in the editor", () => {
    expect(commitMessageProblems("# Please enter the commit message\nFix the lease sweep\n# On branch main\n")).toEqual([]);
  });

  it("names each broken rule", () => {
    const problems = commitMessageProblems("fixed things.\nand more\n");
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toMatch(/full stop[\s\S]*lower case[\s\S]*not blank/);
  });

  it("refuses an empty message and lets git's own subjects through", () => {
    expect(commitMessageProblems("\n# only comments\n")).toEqual(["the message is empty: give it a subject line saying what the commit does"]);
    expect(commitMessageProblems(`Merge branch 'x' into main ${"y".repeat(80)}`)).toEqual([]);
    expect(commitMessageProblems(`Revert "${"y".repeat(80)}"`)).toEqual([]);
  });
});
