# One image for every node-flow process: web (server/web/main.ts), worker (the sidecar)
# and the one-shot migrate job, each compiled to JavaScript in dist/ at build time.
# docker-compose.yml picks the command.

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
# Manifests first, so source edits reuse the cached npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Built without DATABASE_URL or NODE_FLOW_SECRET: nothing secret may be baked
# into the image, and `nf start` builds the same way, so a page that needs them
# at build time fails on a laptop first.
RUN node node_modules/next/dist/bin/next build
# The server processes, bundled by esbuild into dist/ (scripts/build-runtime.ts):
# they start as plain JavaScript, not through tsx.
RUN node --import tsx scripts/build-runtime.ts

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    HOST=0.0.0.0
# Dev dependencies stay: next.config.ts is read at start-up, and `nf worker`
# and the benchmarks run their TypeScript through tsx. The compiled processes
# import every package from node_modules: dist/ holds only our own code.
COPY --from=build --chown=node:node /app /app
# Payloads too large for a row are kept as files under NODE_FLOW_DATA_DIR; the
# directory exists (owned by node) so a volume mounted on it inherits that.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# Exec form so SIGTERM reaches node directly; compose adds an init (init: true)
# to reap child processes and forward signals. The web process: Next for the
# console, the worker APIs straight on node:http (server/web/main.ts says why).
CMD ["node", "--enable-source-maps", "dist/server/web/main.js"]
