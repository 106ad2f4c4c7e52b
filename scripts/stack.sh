#!/usr/bin/env bash
# Provisions and runs the local backing services on loopback, data under .data/:
#   Postgres 15 and Redis 7 (Debian packages) and the Kafka-protocol broker
#   (librdkafka's in-memory mock cluster, started by scripts/kafka-mock/kafka-mock.c).
# ClickHouse is not a server here: the services embed chDB (see clickhouse/client.ts).
#
#   scripts/stack.sh start   install what is missing, start what is not running (idempotent)
#   scripts/stack.sh stop    stop everything this script started (and the local Prometheus, scripts/prometheus.sh)
#   scripts/stack.sh restart-kafka   stop and start the broker alone (it loses every record)
#   scripts/stack.sh stop-postgres|start-postgres|stop-redis|start-redis|stop-kafka|start-kafka   one service alone
#   The broker is started again by itself when it dies (scripts/kafka-mock/keep-running.sh).
#   scripts/stack.sh status  print what is running
#   scripts/stack.sh env     print the env vars for the running stack (eval "$(scripts/stack.sh env)")
#
# STACK_MODE=test trades durability for speed (fsync off) and is what `npm test` uses.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${METERLINE_DATA_DIR:-$ROOT/.data}"
PG_PORT="${PG_PORT:-54329}"
REDIS_PORT="${REDIS_PORT:-63799}"
# A fixed broker port: clients reconnect to the same address after the broker restarts.
KAFKA_PORT="${KAFKA_PORT:-19092}"
STACK_MODE="${STACK_MODE:-dev}"
PG_DB_NAMES="${PG_DB_NAMES:-meterline meterline_test}"

log() { echo "[stack] $*" >&2; }
die() { echo "[stack] error: $*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root to run: $* (install it yourself or run as root)"; fi
}

pg_bin() {
  local v
  v=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
  [ -n "$v" ] && echo "/usr/lib/postgresql/$v/bin"
}

ensure_packages() {
  local missing=()
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/pg_ctl" ] || missing+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  [ -f /usr/include/librdkafka/rdkafka_mock.h ] || missing+=(librdkafka-dev)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
  # the local Prometheus of npm run up, and promtool for the alert rules' test
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# --- Postgres -------------------------------------------------------------
pg_run() {
  # initdb and pg_ctl refuse to run as root: run them as the postgres user.
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_dir() {
  local dir="$DATA/postgres"
  # The postgres user must be able to reach the data dir; a checkout under a private
  # home directory is not reachable, so fall back to a per-checkout dir under /var/tmp.
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    dir="/var/tmp/meterline-$(echo -n "$ROOT" | sha1sum | cut -c1-12)/postgres"
  fi
  echo "$dir"
}

start_postgres() {
  local bin dir sock
  bin="$(pg_bin)"
  dir="$(pg_dir)"
  sock="$dir-run"  # socket and log, owned by the postgres user
  mkdir -p "$dir" "$sock"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir" "$sock" && chmod 700 "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    log "initialising Postgres in $dir"
    pg_run "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
  fi
  if pg_run "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    log "Postgres already running on 127.0.0.1:$PG_PORT"
  else
    local opts="-p $PG_PORT -k $sock -c listen_addresses=127.0.0.1 -c max_connections=200"
    [ "$STACK_MODE" = test ] && opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    log "starting Postgres on 127.0.0.1:$PG_PORT"
    pg_run "$bin/pg_ctl" -D "$dir" -l "$sock/postgres.log" -o "$opts" -w -t 60 start >/dev/null
  fi
  local psql=(psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt)
  if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname='meterline'")" != 1 ]; then
    "${psql[@]}" -c "CREATE ROLE meterline LOGIN PASSWORD 'meterline'"
  fi
  for db in $PG_DB_NAMES; do
    if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname='$db'")" != 1 ]; then
      "${psql[@]}" -c "CREATE DATABASE $db OWNER meterline"
    fi
  done
}

stop_postgres() {
  local bin dir
  bin="$(pg_bin)"; dir="$(pg_dir)"
  [ -n "$bin" ] && [ -f "$dir/PG_VERSION" ] || return 0
  if pg_run "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    log "stopping Postgres"
    pg_run "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
  fi
}

# --- Redis ----------------------------------------------------------------
start_redis() {
  mkdir -p "$DATA/redis"
  if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    log "Redis already running on 127.0.0.1:$REDIS_PORT"
    return
  fi
  log "starting Redis on 127.0.0.1:$REDIS_PORT"
  local persist=(--appendonly yes)
  [ "$STACK_MODE" = test ] && persist=(--appendonly no --save "")
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$DATA/redis" --daemonize yes \
    --pidfile "$DATA/redis/redis.pid" --logfile "$DATA/redis/redis.log" \
    --maxmemory-policy noeviction "${persist[@]}"
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "Redis did not start (see $DATA/redis/redis.log)"
}

stop_redis() {
  if redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    log "stopping Redis"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  fi
}

# --- Kafka-protocol broker (in memory) --------------------------------------
# scripts/kafka-mock/keep-running.sh runs the broker and starts it again when it dies (its pid:
# kafka-keeper.pid; the broker's own: kafka-mock.pid).
kafka_pid() { cat "$DATA/kafka/kafka-mock.pid" 2>/dev/null || true; }
kafka_running() { local p; p="$(kafka_pid)"; [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ -s "$DATA/kafka/bootstrap" ]; }
keeper_pid() { cat "$DATA/kafka/kafka-keeper.pid" 2>/dev/null || true; }
keeper_running() { local p; p="$(keeper_pid)"; [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

wait_for_broker() {
  for _ in $(seq 1 150); do
    kafka_running && { log "broker listening on $(cat "$DATA/kafka/bootstrap")"; return; }
    sleep 0.1
  done
  die "Kafka mock broker did not start on port $KAFKA_PORT (see $DATA/kafka/kafka-mock.log)"
}

start_kafka() {
  mkdir -p "$DATA/kafka" "$DATA/bin"
  if kafka_running; then
    log "Kafka-protocol broker already running on $(cat "$DATA/kafka/bootstrap")"
    return
  fi
  if keeper_running; then
    log "the Kafka-protocol broker is being started again by its keeper"
    wait_for_broker
    return
  fi
  local src="$ROOT/scripts/kafka-mock/kafka-mock.c" bin="$DATA/bin/kafka-mock"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    log "compiling the Kafka mock-cluster launcher"
    gcc -O2 -Wall -o "$bin" "$src" -lrdkafka
  fi
  rm -f "$DATA/kafka/bootstrap" "$DATA/kafka/kafka-mock.pid"
  : >"$DATA/kafka/kafka-mock.log"
  log "starting the Kafka-protocol broker (librdkafka mock cluster, in memory)"
  setsid nohup env KAFKA_PORT="$KAFKA_PORT" bash "$ROOT/scripts/kafka-mock/keep-running.sh" "$bin" "$DATA/kafka" "${KAFKA_EVENTS_PARTITIONS:-16}" \
    >/dev/null 2>&1 </dev/null &
  echo $! >"$DATA/kafka/kafka-keeper.pid"
  wait_for_broker
}

stop_kafka() {
  local k p
  k="$(keeper_pid)"
  p="$(kafka_pid)"
  if { [ -n "$k" ] && kill -0 "$k" 2>/dev/null; } || { [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }; then
    log "stopping the Kafka-protocol broker"
    # either may be gone already (the keeper stops the broker itself): not a failure
    if [ -n "$k" ]; then kill "$k" 2>/dev/null || true; fi
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
    for _ in $(seq 1 50); do
      { [ -n "$k" ] && kill -0 "$k" 2>/dev/null; } || { [ -n "$p" ] && kill -0 "$p" 2>/dev/null; } || break
      sleep 0.1
    done
  fi
  rm -f "$DATA/kafka/kafka-mock.pid" "$DATA/kafka/kafka-keeper.pid" "$DATA/kafka/bootstrap"
}

print_env() {
  echo "export DATABASE_URL=postgres://meterline:meterline@127.0.0.1:$PG_PORT/meterline"
  echo "export REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
  [ -s "$DATA/kafka/bootstrap" ] && echo "export KAFKA_BROKERS=$(cat "$DATA/kafka/bootstrap")"
  echo "export METERLINE_DATA_DIR=$DATA"
}

case "${1:-}" in
  start)
    ensure_packages
    mkdir -p "$DATA"
    start_postgres
    start_redis
    start_kafka
    ;;
  stop)
    bash "$ROOT/scripts/prometheus.sh" stop
    stop_kafka
    stop_redis
    stop_postgres
    ;;
  status)
    pg_run "$(pg_bin)/pg_ctl" -D "$(pg_dir)" status >/dev/null 2>&1 && echo "postgres: running on 127.0.0.1:$PG_PORT" || echo "postgres: stopped"
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && echo "redis: running on 127.0.0.1:$REDIS_PORT" || echo "redis: stopped"
    kafka_running && echo "kafka: running on $(cat "$DATA/kafka/bootstrap")" || echo "kafka: stopped"
    [ -f "$DATA/prometheus/prometheus.pid" ] && kill -0 "$(cat "$DATA/prometheus/prometheus.pid")" 2>/dev/null \
      && echo "prometheus: running on $(bash "$ROOT/scripts/prometheus.sh" url)" || echo "prometheus: stopped"
    ;;
  restart-kafka)
    stop_kafka
    start_kafka
    ;;
  start-kafka)
    ensure_packages
    start_kafka
    ;;
  stop-kafka) stop_kafka ;;
  stop-postgres) stop_postgres ;;
  start-postgres) start_postgres ;;
  stop-redis) stop_redis ;;
  start-redis) start_redis ;;
  env) print_env ;;
  *) echo "usage: $0 start|stop|status|restart-kafka|start-kafka|stop-kafka|stop-postgres|start-postgres|stop-redis|start-redis|env" >&2; exit 2 ;;
esac
