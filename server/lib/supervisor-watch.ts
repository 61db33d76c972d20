/**
 * Stops this process (web or sidecar) once whoever started it is gone:
 *
 * - the IPC channel `nf start` and the system bench open to it closes — their
 *   process ended, even by SIGKILL or the OOM killer, without stopping ours;
 * - its output pipe breaks (EPIPE): nobody reads what it writes any more.
 *
 * Why: `nf start` puts each child in a process group of its own, so a child
 * outlives a supervisor that dies without stopping it. An orphaned web process
 * kept its port, and once it wrote a line to the dead pipe it spun at ~90% of a
 * core for good: each failed write was an 'error' nobody listened to, hence an
 * uncaught exception, which Next's handler logged — to the same pipe. Both
 * signals end in the process's ordinary stop, once.
 *
 * Started on its own (Docker, a terminal) there is no channel and the pipes
 * are whatever the caller gave it; a broken one still stops the process rather
 * than spinning.
 */
export function stopWhenSupervisorGone(stop: (reason: string) => void): void {
  let stopped = false;
  const once = (reason: string) => {
    if (stopped) return;
    stopped = true;
    stop(reason);
  };
  if (process.connected) process.once("disconnect", () => once("the process that started it has gone away"));
  for (const stream of [process.stdout, process.stderr]) {
    // Listening at all is what keeps a failed write from becoming an uncaught exception.
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") once("nobody reads its output any more");
    });
  }
}
