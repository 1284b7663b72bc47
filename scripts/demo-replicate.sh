#!/usr/bin/env bash
# `make demo-replicate`: MariaDB → cdc → PostgreSQL on the local stack.
#   1. the stack (MariaDB, Kafka, PostgreSQL; `make demo-replicate`'s prerequisites) and the schema registry;
#   2. a `cdc standalone` worker on :${CDC_DEMO_REPLICATE_PORT:-8084}, left running
#      (log: .stack/demo-replicate/worker.log);
#   3. the users' seed Debezium config (tests/fixtures/seed-configs/debezium-mysql-avro.json) as it is, and
#      Confluent's JDBC sink from mysqlavro-ops-customers into PostgreSQL's ops.customers;
#   4. inserts, an update, a key change, a delete and a new column on ops.customers, then both tables
#      compared row by row (scripts/demo/replicate.py).
# `scripts/demo-replicate.sh stop` stops the worker (the registry and the stack keep running).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=$REPO/.venv/bin/python
STATE=${CDC_STACK_DIR:-$REPO/.stack}/demo-replicate
PIDFILE=$STATE/worker.pid
PORT=${CDC_DEMO_REPLICATE_PORT:-8084}
URL=http://127.0.0.1:$PORT

worker_running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

if [ "${1:-}" = stop ]; then
  if worker_running; then
    kill "$(cat "$PIDFILE")" && echo "[demo] worker stopped"
    rm -f "$PIDFILE"
  fi
  exit 0
fi

mkdir -p "$STATE"
echo "[demo] schema registry (Apicurio, Confluent API) on :8081"
"$REPO/scripts/registry.sh" start

if worker_running; then
  echo "[demo] worker already running (pid $(cat "$PIDFILE"))"
else
  cat >"$STATE/worker.properties" <<PROPS
bootstrap.servers=127.0.0.1:9092
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.storage.file.filename=$STATE/offsets
offset.flush.interval.ms=1000
listeners=$URL
PROPS
  echo "[demo] starting a cdc standalone worker on :$PORT (log: $STATE/worker.log)"
  nohup "$PY" -m cdc.cli standalone "$STATE/worker.properties" >>"$STATE/worker.log" 2>&1 &
  echo $! >"$PIDFILE"
fi
for _ in $(seq 1 60); do
  curl -fsS "$URL/" >/dev/null 2>&1 && break
  worker_running || { echo "[demo] the worker exited; see $STATE/worker.log" >&2; tail -20 "$STATE/worker.log" >&2; exit 1; }
  sleep 0.5
done

exec "$PY" "$REPO/scripts/demo/replicate.py" --url "$URL" \
  --seed "$REPO/tests/fixtures/seed-configs/debezium-mysql-avro.json" \
  --registry "${CDC_REGISTRY_URL:-http://localhost:8081}"
