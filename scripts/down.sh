#!/usr/bin/env bash
# `npm run down`: stops the all-in-one platform and the local backing services.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${METERLINE_DATA_DIR:-$ROOT/.data}"
pidfile="$DATA/all-in-one.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  pid="$(cat "$pidfile")"
  echo "stopping the platform (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
fi
rm -f "$pidfile"
bash "$ROOT/scripts/stack.sh" stop
