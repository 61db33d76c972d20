/** The `nf` usage text, and the error for a command line it does not describe. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const USAGE = `nf — run and operate node-flow

Usage:
  nf start [--dev] [--port N]   Run node-flow on this machine: database, migrations,
                                web app and worker. Ctrl-C stops everything.
                                --dev   next dev + tsx watch instead of a production build
                                --port  web port (default: PORT or 3000)
  nf migrate [--status]         Apply pending migrations, printing each;
                                --status lists applied, pending and unknown ones.
  nf bootstrap [--email E] [--api-key-only] [--namespace NS] [--key-name NAME]
                                Without a browser: create the owner (email from
                                --email or NODE_FLOW_OWNER_EMAIL, password from
                                NODE_FLOW_OWNER_PASSWORD or --password) and an admin
                                API key for NS (default: default), printed once,
                                alone on stdout. Refuses, creating nothing, when an
                                owner exists; --api-key-only creates just a key.
  nf worker <module> [--url URL] [--namespace NS] [--concurrency N]
            [--shutdown-timeout S] [--abandon] [--worker-id ID] [--quiet]
                                Run a worker module's handlers against a server,
                                over HTTP with an API key (NODE_FLOW_API_KEY). The
                                module's default export is defineWorker({ queues:
                                { name: handler } }) from sdk/ (or export handlers).
                                Ctrl-C stops taking tasks, waits up to S seconds
                                (default 30) for running ones, then gives them back
                                to the queue (--abandon: leaves them to their
                                lease); a second Ctrl-C gives them back at once.
                                Example: nf worker examples/hello-worker.ts

Against a running server (NODE_FLOW_URL, NODE_FLOW_API_KEY, NODE_FLOW_NAMESPACE,
or --url, --api-key, --namespace; --json on every read; --help on each):
  nf run <workflow> [--version N] [--input FILE|JSON] [--wait | --follow]
                                Start a run; --wait exits with its outcome, --follow
                                also shows node statuses live as they change.
  nf runs list|get|retry|rerun|restart|terminate …
                                List, inspect and act on runs.
  nf tail [--workflow W] [--status S]
                                Live run and task events of the namespace.
  nf export [NAME…] [--format nodeflow|conductor] [--out DIR]
  nf import <FILE|DIR>… [--dry-run]
                                Definitions as files, one per workflow, for git;
                                import creates or updates and reports each file.
  nf replay <run id> [--version N]
                                Replay a run's history through today's decider and
                                report the first divergence.

Locally, no server:
  nf test <workflow file> [--cases FILE]
                                Run a workflow in the testkit with mocked task
                                results and check each case's expectations.

  nf help                       Show this text. docs/cli.md has the details.

Exit codes: 0 ok; 1 a run did not complete, a test case failed, a replay
diverged (and nf start/migrate/bootstrap/worker failures); 2 usage; 3 the
server refused or did not answer (key, scope, conflict, 5xx); 4 not found.

Environment:
  DATABASE_URL        Postgres 18 URL. Unset: an embedded Postgres 18 under
                      NODE_FLOW_DATA_DIR (default .data/), created on first start.
  NODE_FLOW_SECRET    Signing secret, 32+ characters. Required with DATABASE_URL;
                      generated once into .data/secret otherwise.
  NODE_FLOW_ROLES     Worker roles (default decider,poller); the web process is api.
  PORT, HOST          Web address (default 3000 on 0.0.0.0).
  LOG_LEVEL           fatal, error, warn, info (default), debug, trace or silent.
  NODE_FLOW_URL       nf worker, run, runs, tail, export, import, replay: the
                      server (default http://localhost:3000).
  NODE_FLOW_API_KEY   Their API key: the worker scope is enough for nf worker;
                      the other commands need the admin scope.
                      --api-key also works but shows in ps. Create one under
                      Settings → API keys, or with nf bootstrap.
  NODE_FLOW_NAMESPACE Their namespace (default: default).
  NODE_FLOW_OWNER_EMAIL, NODE_FLOW_OWNER_PASSWORD
                      The owner nf bootstrap creates (flags win). Prefer the
                      variable to --password, which shows in ps and shell history.

npm scripts: npm start = nf start, npm run dev = nf start --dev, npm run migrate = nf migrate.
Benchmarks live apart from nf, in bench/ (npm run bench, bench:engine, bench:worker,
bench:canvas, bench:live); bench/README.md says what each measures.
`;
