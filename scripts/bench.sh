#!/usr/bin/env bash
# `npm run bench:ingest`: starts the local stack like the tests do, then runs bench/ingest.ts.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/install-deps.sh
bash scripts/stack.sh start
eval "$(bash scripts/stack.sh env)"
node --import tsx scripts/migrate.ts --postgres-only
rm -rf "$METERLINE_DATA_DIR/chdb-bench"
node --import tsx bench/ingest.ts
