#!/usr/bin/env bash
# A local Prometheus (Debian package `prometheus`) scraping the platform's /metrics with the
# project's alert rules (deploy/prometheus/alerts.yml). `npm run up` starts it beside the stack,
# `npm run down` (scripts/stack.sh stop) stops it; `npm run dashboards:snapshot` and the tests
# start their own with --dir, --target and --interval.
#
#   scripts/prometheus.sh start  [--dir D] [--target host:port] [--interval 5s]   write the config, start (idempotent)
#   scripts/prometheus.sh stop   [--dir D]
#   scripts/prometheus.sh config [--dir D] [--target host:port] [--interval 5s]   write the config only, print its path
#   scripts/prometheus.sh url
#
# Defaults: --dir $METERLINE_DATA_DIR/prometheus (config, pid, log, data/), --interval 5s; the
# targets: with --target that one address, else the processes topology's roles as its supervisor
# lists them ($METERLINE_DATA_DIR/prometheus-targets.json, each role its own job), or with
# PLATFORM_TOPOLOGY=all-in-one the platform's HOST:PORT; the web UI and API listen on 127.0.0.1:PROMETHEUS_PORT
# (0: `start` starts nothing and `url` prints nothing; the fault and chaos suites' private stacks).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="${METERLINE_DATA_DIR:-$ROOT/.data}"
PROMETHEUS_PORT="${PROMETHEUS_PORT:-19090}"
cmd="${1:-}"
[ $# -gt 0 ] && shift
dir="$DATA/prometheus"
target=""
interval=5s
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
url="http://127.0.0.1:$PROMETHEUS_PORT"
pidfile="$dir/prometheus.pid"

log() { echo "[prometheus] $*" >&2; }
running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

targets_file="$DATA/prometheus-targets.json"
if [ -z "$target" ] && [ "${PLATFORM_TOPOLOGY:-processes}" = all-in-one ]; then target="${HOST:-127.0.0.1}:${PORT:-8080}"; fi

scrape_config() {
  if [ -n "$target" ]; then
    # job all-in-one: the one local process serves every service's metrics on one port.
    cat <<EOF
  - job_name: all-in-one
    metrics_path: /metrics
    static_configs:
      - targets: ["$target"]
EOF
  else
    # every role's process, as the supervisor lists them; the job is the role (as in compose)
    [ -f "$targets_file" ] || echo '[]' > "$targets_file"
    cat <<EOF
  - job_name: platform
    metrics_path: /metrics
    file_sd_configs:
      - files: ["$targets_file"]
        refresh_interval: 5s
    relabel_configs:
      - source_labels: [role]
        target_label: job
EOF
  fi
}

write_config() {
  mkdir -p "$dir/data"
  cat > "$dir/prometheus.yml" <<EOF
# Written by scripts/prometheus.sh: the local Prometheus of npm run up.
global:
  scrape_interval: $interval
  scrape_timeout: $interval
  evaluation_interval: $interval
rule_files:
  - $ROOT/deploy/prometheus/alerts.yml
scrape_configs:
$(scrape_config)
EOF
}

case "$cmd" in
  config)
    write_config
    echo "$dir/prometheus.yml"
    ;;
  start)
    [ "$PROMETHEUS_PORT" = 0 ] && { log "PROMETHEUS_PORT=0: no local Prometheus"; exit 0; }
    command -v prometheus >/dev/null 2>&1 || { log "error: prometheus is not installed (scripts/stack.sh start installs the Debian package)"; exit 1; }
    write_config
    if running; then
      # the config may have changed (another target): reload it
      kill -HUP "$(cat "$pidfile")"
      log "already running on $url (pid $(cat "$pidfile")); configuration reloaded"
      exit 0
    fi
    log "starting Prometheus on $url, scraping ${target:-the processes of the topology} every $interval"
    setsid nohup prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
      --web.listen-address="127.0.0.1:$PROMETHEUS_PORT" --log.level=warn \
      >"$dir/prometheus.log" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    for _ in $(seq 1 150); do
      curl -fs "$url/-/ready" >/dev/null 2>&1 && exit 0
      running || break
      sleep 0.2
    done
    log "error: Prometheus did not become ready on $url (see $dir/prometheus.log)"
    exit 1
    ;;
  stop)
    if running; then
      p="$(cat "$pidfile")"
      log "stopping Prometheus"
      kill "$p"
      for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
    ;;
  url) [ "$PROMETHEUS_PORT" = 0 ] || echo "$url" ;;
  *) echo "usage: $0 start|stop|config|url [--dir D] [--target host:port] [--interval 5s]" >&2; exit 2 ;;
esac
