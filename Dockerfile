# syntax=docker/dockerfile:1
# smppd's image. Build and run:
#   docker build -t smppd .
#   docker run -p 8080:8080 -v smppd-data:/var/lib/smppd --stop-timeout 60 smppd
# --stop-timeout (compose: stop_grace_period: 60s): docker stop waits 10 s before SIGKILL, and a
# graceful stop with the default settings may take 30 s (drain 10, unbind 10, webhooks 10).
# The default CMD runs config/smppd.docker.yaml, the demo; for real use mount a config and name it:
#   docker run … -v /srv/smppd/smppd.yaml:/etc/smppd/smppd.yaml:ro smppd start --config /etc/smppd/smppd.yaml
# keeping store.path under /var/lib/smppd and http.listen on port 8080 (the HEALTHCHECK asks there).
#
# Three stages on one base image, so the native better-sqlite3 compiled in `deps` matches the
# glibc and Node ABI of the image that runs it:
#   build  every dependency, no install scripts; compiles TypeScript to dist/
#   deps   `npm ci --omit=dev`: the production dependencies, better-sqlite3 built
#   final  node, dist/, deps' node_modules, config/; no compiler, no dev dependency, no npm cache
# Why `deps` rather than `npm ci --omit=dev` in the final stage: better-sqlite3 compiles from source
# (python3, make, g++) when its prebuilt binary cannot be downloaded. In the final stage the tools
# would have to be installed, used and purged in one RUN, and the purge would still leave apt's
# traces; in a stage of their own they never reach the final image.
#
# The base: the newest Node.js LTS line (24) on the current Debian stable (13, trixie; bookworm is
# oldstable), pinned by digest so that every stage and every rebuild get the same node and glibc: a
# tag moves whenever it is rebuilt. The digest is that of node:24.18.1-trixie-slim, the
# multi-platform index (amd64, arm64, ppc64le, s390x).
# Why 24.18.1 and not a later 24.x: `deps` may compile better-sqlite3 against the image's headers,
# and those of 24.19 and later compile into it (a node::ObjectWrap addon) a destructor that aborts
# the process when V8 collects one of its objects outside JavaScript (nodejs/node#65446). Move on
# when a 24.x release fixes that, or when better-sqlite3 13 (Node-API) replaces 12:
#   docker buildx imagetools inspect node:24.x.y-trixie-slim    # "Digest:" is the index's digest
ARG NODE_IMAGE=node:24.18.1-trixie-slim@sha256:ac39e4b5fcb2b1b34b20364fd58b2e898f3bb80731ee6f62a7536f9df3d6aadc

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# tsc needs no native module: no install script runs here, nor "prepare" (the build is the RUN below).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# node-gyp takes the headers of this very node from the image instead of downloading them.
ENV npm_config_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: npm ci runs package.json's "prepare" (npm run build), and tsc is a dev
# dependency, absent here. The install scripts that matter are then run by name: those of the
# production packages package-lock.json marks "hasInstallScript", i.e. better-sqlite3 (its
# prebuilt binary, or a build from source).
RUN npm ci --omit=dev --ignore-scripts \
 && npm rebuild better-sqlite3

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /opt/smppd
# A fixed numeric user, so that Kubernetes' runAsNonRoot can check it and a bind-mounted store
# directory can be chowned to it (10001) on the host. The volume's directory is created here,
# owned by it, so a new named volume starts with that owner.
RUN groupadd --system --gid 10001 smppd \
 && useradd --system --uid 10001 --gid smppd --home-dir /var/lib/smppd --no-create-home --shell /usr/sbin/nologin smppd \
 && mkdir -p /var/lib/smppd \
 && chown smppd:smppd /var/lib/smppd \
 && chmod 0700 /var/lib/smppd
# Owned by root, read-only to smppd. package.json: `smppd version` reads it beside dist/.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
USER 10001:10001
VOLUME ["/var/lib/smppd"]
EXPOSE 8080
# Liveness: GET /healthz needs no token. node, because the slim image has no curl or wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains and unbinds (see --stop-timeout above); node is PID 1 and handles it itself.
STOPSIGNAL SIGTERM
# --max-semi-space-size=32: less garbage-collection work per message (src/cli/node-flags.ts).
ENTRYPOINT ["node", "--max-semi-space-size=32", "/opt/smppd/dist/src/main.js"]
CMD ["start", "--config", "/opt/smppd/config/smppd.docker.yaml"]
