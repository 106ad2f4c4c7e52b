#!/usr/bin/env bash
# `npm run down`: stops the all-in-one platform (it stops accepting, drains its spool and the
# aggregator into ClickHouse, then exits) and the local backing services. Harmless when nothing
# runs, when run twice, or while `npm run up` is still starting.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${METERLINE_DATA_DIR:-$ROOT/.data}"
uppid="$DATA/up.pid"
pidfile="$DATA/platform.pid"
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# An `npm run up` that is starting or running stops the platform and the stack itself.
alive "$uppid" && kill -TERM "$(cat "$uppid")" 2>/dev/null || true
if alive "$pidfile"; then
  pid="$(cat "$pidfile")"
  echo "stopping the platform (pid $pid): draining the spool and the aggregator"
  kill -TERM "$pid" 2>/dev/null || true
  # The platform drains for SHUTDOWN_DRAIN_MS, then finishes its write in progress and exits (the
  # processes topology stops its roles in turn, each bounded); kill it only if it hangs.
  for _ in $(seq 1 900); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "the platform did not stop in 90 s; killing it (its spool keeps what is not yet safe)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  [ -f "$DATA/last-stop.txt" ] && cat "$DATA/last-stop.txt"
fi
for _ in $(seq 1 300); do alive "$uppid" || break; sleep 0.1; done
rm -f "$pidfile"
bash "$ROOT/scripts/stack.sh" stop
