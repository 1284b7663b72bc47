#!/usr/bin/env bash
# `make demo`: the main job end to end on the local stack.
#   1. the stack (MariaDB, Kafka; started by `make demo`'s prerequisites) and a schema registry;
#   2. a `cdc distributed` worker on :8083, left running (log: .stack/demo/worker.log);
#   3. the users' seed Debezium config (shared/reference/seed-configs/debezium-mysql-avro.json, our copy in
#      tests/fixtures/seed-configs) registered over REST exactly as it is;
#   4. inserts, updates and deletes on ops.customers, and the change events printed as they arrive.
# `scripts/demo.sh stop` stops the worker and the registry; `make down` stops the stack.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=$REPO/.venv/bin/python
STATE=${CDC_STACK_DIR:-$REPO/.stack}/demo
PIDFILE=$STATE/worker.pid
URL=http://127.0.0.1:8083

worker_running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

if [ "${1:-}" = stop ]; then
  if worker_running; then
    kill "$(cat "$PIDFILE")" && echo "[demo] worker stopped"
    rm -f "$PIDFILE"
  fi
  "$REPO/scripts/registry.sh" stop || true
  exit 0
fi

mkdir -p "$STATE"
echo "[demo] schema registry (Apicurio, Confluent API) on :8081"
"$REPO/scripts/registry.sh" start

if worker_running; then
  echo "[demo] worker already running (pid $(cat "$PIDFILE"))"
else
  echo "[demo] starting a cdc distributed worker on :8083 (log: $STATE/worker.log)"
  nohup "$PY" -m cdc.cli distributed "$REPO/scripts/demo/worker.properties" >>"$STATE/worker.log" 2>&1 &
  echo $! >"$PIDFILE"
fi
for _ in $(seq 1 60); do
  curl -fsS "$URL/" >/dev/null 2>&1 && break
  worker_running || { echo "[demo] the worker exited; see $STATE/worker.log" >&2; tail -20 "$STATE/worker.log" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "$URL/"; echo

exec "$PY" "$REPO/scripts/demo/run.py" --url "$URL" --seed "$REPO/tests/fixtures/seed-configs/debezium-mysql-avro.json"
