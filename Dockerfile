# syntax=docker/dockerfile:1
# Build stage: compile TypeScript (better-sqlite3 and other native modules build here too).
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci && npm prune --omit=dev

# Runtime stage: production dependencies and dist only, as a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /opt/smppd
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
RUN groupadd --system smppd && useradd --system --gid smppd --home-dir /var/lib/smppd smppd \
 && mkdir -p /var/lib/smppd && chown smppd:smppd /var/lib/smppd
USER smppd
VOLUME ["/var/lib/smppd"]
ENTRYPOINT ["node", "/opt/smppd/dist/src/main.js"]
CMD ["start", "--config", "/opt/smppd/config/smppd.yaml"]
