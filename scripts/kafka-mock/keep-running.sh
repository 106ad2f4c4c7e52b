#!/usr/bin/env bash
# Runs the local Kafka-protocol broker (kafka-mock) and starts it again when it dies: librdkafka's
# mock cluster has aborted under long rebalancing runs (docs/architecture.md, "The local broker
# can abort"), and a kill -9 is one of the faults the tests inject. The broker comes back empty on
# the same port: clients reconnect, and ingest's spool sends again what the aggregators had not
# committed. SIGTERM stops the broker and this loop (scripts/stack.sh stop).
#   keep-running.sh <kafka-mock binary> <its directory (bootstrap, control, pid, log)> <events partitions>
set -u
bin="$1" dir="$2" partitions="$3"
stopping=0
child=""
quick=0 # exits in a row within 5 s of a start: a broker that cannot start (port taken) is not retried for ever
trap 'stopping=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
while [ -d "$dir" ]; do
  rm -f "$dir/bootstrap"
  started=$SECONDS
  "$bin" "$dir/bootstrap" "$dir/control" "events:$partitions" system_events:1 >>"$dir/kafka-mock.log" 2>&1 </dev/null &
  child=$!
  echo "$child" >"$dir/kafka-mock.pid"
  [ "$stopping" = 1 ] && kill -TERM "$child" 2>/dev/null
  wait "$child"
  status=$?
  if [ "$stopping" = 1 ]; then
    # a trapped signal ends the first wait early: wait for the broker itself
    wait "$child" 2>/dev/null
    break
  fi
  if [ $((SECONDS - started)) -lt 5 ]; then quick=$((quick + 1)); else quick=0; fi
  if [ "$quick" -ge 5 ]; then
    echo "[kafka-keeper] $(date -u +%FT%TZ) the broker exited within 5 s of its start 5 times in a row (status $status); giving up" >>"$dir/kafka-mock.log"
    break
  fi
  echo "[kafka-keeper] $(date -u +%FT%TZ) the broker (pid $child) exited with status $status; starting it again, empty" >>"$dir/kafka-mock.log"
  sleep 0.5
done
rm -f "$dir/kafka-mock.pid" "$dir/bootstrap"
