import { describe, expect, it } from "vitest";
import { RunView } from "./follow-run";
import type { Output } from "./remote";

function capture(tty: boolean): Output & { text: () => string } {
  let text = "";
  return { out: (t) => void (text += t), err: (t) => void (text += t), outTty: tty, errTty: tty, text: () => text };
}

/** Elapsed times vary; the drawing does not. */
const timeless = (text: string) => text.replace(/\d+\.\ds/g, "T");

describe("the --follow view", () => {
  it("writes one line per change in a log, and ignores repeats and older attempts", () => {
    const output = capture(false);
    const view = new RunView("r-1", output, { show: true, viewTo: "out" });
    view.task("a", "SCHEDULED", 0, 0);
    view.task("a", "SCHEDULED", 0, 0);
    view.task("a", "FAILED", 0, 0, "boom");
    view.task("a", "IN_PROGRESS", 0, 1);
    view.task("a", "FAILED", 0, 0);
    view.workflow("COMPLETED");
    expect(timeless(output.text())).toBe("+T  a  SCHEDULED\n+T  a  FAILED: boom\n+T  a  IN_PROGRESS (attempt 2)\n+T  run COMPLETED\n");
  });

  it("redraws the whole block in place on a terminal", () => {
    const output = capture(true);
    const view = new RunView("r-1", output, { show: true, viewTo: "out" });
    view.task("a", "COMPLETED", 0, 0);
    view.task("b", "IN_PROGRESS", 0, 0);
    const second = timeless(output.text()).split("run r-1  RUNNING  T\n  ✓ a").length;
    expect(second).toBe(3);
    // The second drawing first moves up over the two lines of the first and clears below.
    expect(output.text()).toContain("\u001b[2F\u001b[0J");
    expect(output.text().endsWith(`  ⟳ b${" ".repeat(23)} IN_PROGRESS\n`)).toBe(true);
  });

  it("--wait alone draws one progress line on a terminal and nothing in a log", () => {
    const log = capture(false);
    new RunView("r-1", log, { show: false, viewTo: "out" }).task("a", "COMPLETED", 0, 0);
    expect(log.text()).toBe("");
    const tty = capture(true);
    const view = new RunView("r-1", tty, { show: false, viewTo: "out" });
    view.task("a", "COMPLETED", 0, 0);
    view.finish();
    expect(timeless(tty.text())).toBe("\r\u001b[2Kwaiting for run r-1: RUNNING, 1 of 1 node(s) done, T\n");
  });
});
