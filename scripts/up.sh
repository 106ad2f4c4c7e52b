#!/usr/bin/env bash
# `npm run up`: installs what is missing, starts Postgres, Redis and the Kafka-protocol broker
# on loopback (data under .data/), a local Prometheus scraping the platform (scripts/prometheus.sh), then
# the production topology: each role its own supervised process reaching the local ClickHouse
# endpoint over HTTP (scripts/platform-processes.ts), or (PLATFORM_TOPOLOGY=all-in-one) ingest +
# aggregator + billing-api + scheduler in one process (scripts/all-in-one.ts), with a demo tenant. Ctrl-C or `npm run down` stops everything. If the platform process dies on its own
# (a crash, kill -9), the databases and the broker keep running and keep what they hold:
# `npm run up` again starts the platform alone, and its spool sends again what was not safe.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DATA="${METERLINE_DATA_DIR:-$ROOT/.data}"
mkdir -p "$DATA"

uppid="$DATA/up.pid"
if [ -f "$uppid" ] && kill -0 "$(cat "$uppid")" 2>/dev/null; then
  echo "npm run up is already running (pid $(cat "$uppid")); npm run down stops it" >&2
  exit 1
fi
echo $$ > "$uppid"
stopping=0
pid=""
# `npm run down` (or Ctrl-C) while starting or running: stop the platform, then the stack.
on_signal() {
  stopping=1
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
}
trap on_signal INT TERM
trap '[ "$(cat "$uppid" 2>/dev/null)" = "$$" ] && rm -f "$uppid"' EXIT

stop_stack_and_exit() { bash scripts/stack.sh stop; exit 0; }

bash scripts/install-deps.sh
[ "$stopping" = 1 ] && exit 0
bash scripts/stack.sh start
[ "$stopping" = 1 ] && stop_stack_and_exit
eval "$(bash scripts/stack.sh env)"
# The local Prometheus is for looking: the platform starts without it.
prometheus_url=""
if bash scripts/prometheus.sh start; then
  prometheus_url="$(bash scripts/prometheus.sh url)"
  [ -n "$prometheus_url" ] && echo "[up] Prometheus: $prometheus_url (targets: $prometheus_url/targets, alert rules: $prometheus_url/alerts)"
else
  echo "[up] warning: the local Prometheus did not start; the platform starts without it" >&2
fi
[ "$stopping" = 1 ] && stop_stack_and_exit

# The operators' API (npm run admin, job:run, tenant:create while the platform runs) needs a
# token: without one set, a random one is kept in the data directory, readable by this user only.
if [ -z "${ADMIN_TOKEN:-}" ]; then
  tokenfile="$METERLINE_DATA_DIR/admin-token"
  [ -s "$tokenfile" ] || (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' > "$tokenfile")
  ADMIN_TOKEN="$(cat "$tokenfile")"
  export ADMIN_TOKEN
fi

pidfile="$METERLINE_DATA_DIR/platform.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "the platform is already running (pid $(cat "$pidfile")); npm run down stops it" >&2
  exit 1
fi
[ "$stopping" = 1 ] && stop_stack_and_exit
entry=scripts/platform-processes.ts
[ "${PLATFORM_TOPOLOGY:-processes}" = all-in-one ] && entry=scripts/all-in-one.ts
node --import tsx "$entry" --demo ${prometheus_url:+--prometheus "$prometheus_url"} &
pid=$!
echo "$pid" > "$pidfile"
# A stop that arrived between the check above and `pid=$!` found no pid to signal.
if [ "$stopping" = 1 ]; then kill -TERM "$pid" 2>/dev/null || true; fi
set +e
# The first wait returns when a signal arrives or the platform exits; after a signal, the
# second one waits for its graceful shutdown (drain).
wait "$pid"
code=$?
if [ "$stopping" = 1 ]; then wait "$pid" 2>/dev/null; code=$?; fi
set -e
rm -f "$pidfile"
if [ "$stopping" = 1 ]; then stop_stack_and_exit; fi
echo "[up] the platform exited (status $code). Postgres, Redis and the broker keep running;" \
  "npm run up starts the platform again, npm run down stops everything." >&2
exit "$code"
