import { UsageError, USAGE } from "./help";

/**
 * The `nf` command. npm scripts run it through tsx (`npm start`, `npm run dev`,
 * `npm run migrate`); each subcommand lives in its own file and is imported
 * only when chosen, so `nf help` does not load pg or Kysely.
 */
async function main(argv: string[]): Promise<number | "running"> {
  const [command, ...rest] = argv;
  switch (command) {
    case "start": {
      const { runStart } = await import("./start");
      // Returns once node-flow is up; signal handlers and children keep the process alive.
      await runStart(rest, process.env);
      return "running";
    }
    case "migrate": {
      const { runMigrate } = await import("./migrate");
      return runMigrate(rest, process.env);
    }
    case "bootstrap": {
      const { runBootstrap } = await import("./bootstrap");
      return runBootstrap(rest, process.env);
    }
    case "worker": {
      const { runWorker } = await import("./worker");
      return runWorker(rest, process.env);
    }
    case "bench": {
      const { runBench } = await import("../bench/system-bench");
      return runBench(rest, process.env);
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    case undefined:
      process.stderr.write(USAGE);
      return 1;
    default:
      process.stderr.write(`nf: unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== "running") process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`nf: ${error.message}\n\n${USAGE}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
