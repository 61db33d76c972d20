/**
 * A stand-in for the web process in supervisor-watch.test.ts: it writes a line
 * to stderr every 20 ms, logs every uncaught exception to stderr the way
 * Next's handler does (what made a broken pipe spin), and on
 * stopWhenSupervisorGone writes the reason to SUPERVISED_CHILD_REPORT and exits.
 */
import { writeFileSync } from "node:fs";
import { stopWhenSupervisorGone } from "../lib/supervisor-watch";

process.on("uncaughtException", (error) => console.error(error));
stopWhenSupervisorGone((reason) => {
  writeFileSync(process.env.SUPERVISED_CHILD_REPORT ?? "/dev/null", reason);
  process.exit(0);
});
setInterval(() => process.stderr.write("tick\n"), 20);
