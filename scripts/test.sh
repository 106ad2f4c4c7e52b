#!/usr/bin/env bash
# `npm test`: installs what is missing, starts Postgres, Redis and the Kafka-protocol broker
# (scripts/stack.sh), migrates the test database and runs every test file with Node's test
# runner. Services this script started are stopped again at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/install-deps.sh

export STACK_MODE=test
started_here=0
if ! bash scripts/stack.sh status | grep -q 'kafka: running'; then started_here=1; fi
bash scripts/stack.sh start
cleanup() { [ "$started_here" = 1 ] && bash scripts/stack.sh stop || true; }
trap cleanup EXIT

eval "$(bash scripts/stack.sh env)"
export DATABASE_URL="${DATABASE_URL%/*}/meterline_test"
node --import tsx scripts/migrate.ts --postgres-only

mapfile -t files < <(find aggregator billing-api client clickhouse console ingest platform scheduler schemas scripts test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
if [ $# -gt 0 ]; then files=("$@"); fi
echo "running ${#files[@]} test files"
# --test-force-exit: a file whose tests and hooks have all finished ends even if something left a
# handle open. Under CI load a file has twice stayed alive after every test of it passed
# (scheduler/scheduler.test.ts, billing-api/webhooks/ssrf.test.ts), until the file's timeout.
# --test-timeout: a file's whole run, not one test. The fault files restart a platform several
# times; on a slow machine under the other file's load each restart has taken 45-75 s, and their
# files ran past 300 s. A file that runs out of time stops what it started (test/support/stop-on-test-timeout.ts).
# test/support/flush-test-report.mjs: that exit waits until the file's report has reached the runner
# (without it the runner lost the last tests' verdicts now and then: nodejs/node#64833).
node --test --import tsx --import ./test/support/flush-test-report.mjs --test-force-exit --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout=900000 "${files[@]}"
