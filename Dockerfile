# One image for every node-flow process: web (server/web/main.ts), worker (the sidecar)
# and the one-shot migrate job. docker-compose.yml picks the command.

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

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    HOST=0.0.0.0
# Dev dependencies stay: the web process, the worker and `nf migrate` run
# TypeScript through tsx at run time, and next.config.ts is read at start-up.
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 3000
# Exec form so SIGTERM reaches node directly; compose adds an init (init: true)
# to reap child processes and forward signals. The web process: Next for the
# console, the worker APIs straight on node:http (server/web/main.ts says why).
CMD ["node", "--import", "tsx", "server/web/main.ts"]
