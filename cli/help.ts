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
  nf help                       Show this text.

Environment:
  DATABASE_URL        Postgres 18 URL. Unset: an embedded Postgres 18 under
                      NODE_FLOW_DATA_DIR (default .data/), created on first start.
  NODE_FLOW_SECRET    Signing secret, 32+ characters. Required with DATABASE_URL;
                      generated once into .data/secret otherwise.
  NODE_FLOW_ROLES     Worker roles (default decider,poller); the web process is api.
  PORT, HOST          Web address (default 3000 on 0.0.0.0).
  LOG_LEVEL           fatal, error, warn, info (default), debug, trace or silent.
  NODE_FLOW_URL       nf worker: the server (default http://localhost:3000).
  NODE_FLOW_API_KEY   nf worker: an API key with the worker (or admin) scope;
                      --api-key also works but shows in ps. Create one under
                      Settings → API keys, or with nf bootstrap.
  NODE_FLOW_NAMESPACE nf worker: the namespace (default: default).
  NODE_FLOW_OWNER_EMAIL, NODE_FLOW_OWNER_PASSWORD
                      The owner nf bootstrap creates (flags win). Prefer the
                      variable to --password, which shows in ps and shell history.

npm scripts: npm start = nf start, npm run dev = nf start --dev, npm run migrate = nf migrate.
Benchmarks live apart from nf, in bench/ (npm run bench, bench:engine, bench:worker,
bench:canvas, bench:live); bench/README.md says what each measures.
`;
