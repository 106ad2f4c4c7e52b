# One image for every Meterline service (migrate, ingest, aggregator,
# billing-api, scheduler). TypeScript runs directly through tsx; no build step.
FROM node:20-bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production
WORKDIR /app

# Install dependencies first so this layer is cached across source changes.
# tsx is a runtime dependency, so --omit=dev still provides it. `npm install` honours the lock
# file; `npm ci` would refuse it because the lock lacks other platforms' optional chDB binaries.
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
# The operators' console's static files (served at /console by billing-api).
RUN npm run console:build

# Default: everything in one process. docker-compose.yml overrides the command
# per service.
CMD ["npx", "tsx", "scripts/all-in-one.ts"]
