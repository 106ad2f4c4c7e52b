#!/usr/bin/env bash
# `npm run up`: installs what is missing, starts Postgres, Redis and the Kafka-protocol broker
# on loopback (data under .data/), then ingest + aggregator + billing-api + scheduler in one
# process (the embedded ClickHouse binds its data directory to one process), with a demo
# tenant. Ctrl-C stops everything; so does `npm run down` from another terminal.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/install-deps.sh
bash scripts/stack.sh start
eval "$(bash scripts/stack.sh env)"

pidfile="$METERLINE_DATA_DIR/all-in-one.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "the platform is already running (pid $(cat "$pidfile")); npm run down stops it" >&2
  exit 1
fi
node --import tsx scripts/all-in-one.ts --demo &
pid=$!
echo "$pid" > "$pidfile"
stop() { kill -TERM "$pid" 2>/dev/null || true; }
trap stop INT TERM
# The first wait returns when a signal arrives; the second waits for the graceful shutdown.
wait "$pid" || true
wait "$pid" 2>/dev/null || true
rm -f "$pidfile"
bash scripts/stack.sh stop
