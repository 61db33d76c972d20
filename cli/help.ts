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
  nf help                       Show this text.

Environment:
  DATABASE_URL        Postgres 18 URL. Unset: an embedded Postgres 18 under
                      NODE_FLOW_DATA_DIR (default .data/), created on first start.
  NODE_FLOW_SECRET    Signing secret, 32+ characters. Required with DATABASE_URL;
                      generated once into .data/secret otherwise.
  NODE_FLOW_ROLES     Worker roles (default decider,poller); the web process is api.
  PORT, HOST          Web address (default 3000 on 0.0.0.0).
  LOG_LEVEL           fatal, error, warn, info (default), debug, trace or silent.
  NODE_FLOW_OWNER_EMAIL, NODE_FLOW_OWNER_PASSWORD
                      The owner nf bootstrap creates (flags win). Prefer the
                      variable to --password, which shows in ps and shell history.

npm scripts: npm start = nf start, npm run dev = nf start --dev, npm run migrate = nf migrate.
`;
