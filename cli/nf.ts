import { UsageError, USAGE } from "./help";
import { DEFAULT_URL, EXIT, failureOf } from "./remote";
import type { Remote } from "./remote";

/**
 * The `nf` command. `npm start` runs it compiled (dist/cli/nf.js, built by
 * scripts/build-runtime.ts), the other npm scripts through tsx (`npm run dev`,
 * `npm run nf`, `npm run migrate`); each subcommand lives in its own file and is
 * imported only when chosen, so `nf help` does not load pg or Kysely (in the
 * bundle each is a chunk of its own).
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
    case "run": {
      const { runRun } = await import("./run-command");
      return runRun(rest, process.env);
    }
    case "runs": {
      const { runRuns } = await import("./runs-command");
      return runRuns(rest, process.env);
    }
    case "tail": {
      const { runTail } = await import("./tail-command");
      return runTail(rest, process.env);
    }
    case "export": {
      const { runExport } = await import("./definitions-command");
      return runExport(rest, process.env);
    }
    case "import": {
      const { runImport } = await import("./definitions-command");
      return runImport(rest, process.env);
    }
    case "test": {
      const { runTest } = await import("./test-command");
      return runTest(rest);
    }
    case "replay": {
      const { runReplay } = await import("./replay-command");
      return runReplay(rest, process.env);
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
      return EXIT.usage;
    default:
      process.stderr.write(`nf: unknown command "${command}"\n\n${USAGE}`);
      return EXIT.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== "running") process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`nf: ${error.message}\n\n${USAGE}`);
      process.exit(EXIT.usage);
    }
    // The commands that talk to a server explain its refusals in one line, with their own exit code.
    const failure = failureOf(error, remoteOf(process.argv.slice(3)));
    if (failure !== undefined) {
      process.stderr.write(`nf: ${failure.message}\n`);
      process.exit(failure.exitCode);
    }
    console.error(error);
    process.exit(1);
  },
);

/** The server and namespace the failed command used, for its error message. */
function remoteOf(argv: string[]): Remote {
  const flag = (name: string) => {
    const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
    if (i < 0) return undefined;
    return argv[i] === name ? argv[i + 1] : argv[i]!.slice(name.length + 1);
  };
  return {
    baseUrl: flag("--url") ?? process.env.NODE_FLOW_URL ?? DEFAULT_URL,
    apiKey: undefined,
    namespace: flag("--namespace") ?? process.env.NODE_FLOW_NAMESPACE ?? "default",
  };
}
