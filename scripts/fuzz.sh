#!/usr/bin/env bash
# Fuzz the worker's REST API from its own OpenAPI description with schemathesis: no 5xx, no stack trace.
# Starts a standalone worker on 127.0.0.1 (Kafka from $CDC_KAFKA_BOOTSTRAP, default 127.0.0.1:9092), runs
# schemathesis against /openapi.json, stops the worker. Usage: scripts/fuzz.sh [MAX_EXAMPLES] [extra args]
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_EXAMPLES="${1:-50}"; shift || true
BIN="${BIN:-.venv/bin}"
WORK="$(mktemp -d -t cdc-fuzz-XXXXXX)"
PORT="$("$BIN/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat > "$WORK/worker.properties" <<PROPS
bootstrap.servers=${CDC_KAFKA_BOOTSTRAP:-127.0.0.1:9092}
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$WORK/offsets
listeners=http://127.0.0.1:$PORT
PROPS
"$BIN/python" -m cdc.cli standalone "$WORK/worker.properties" >"$WORK/worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true; wait $WORKER 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break
  kill -0 $WORKER 2>/dev/null || { cat "$WORK/worker.log"; exit 1; }
  sleep 0.2
done
echo "fuzzing http://127.0.0.1:$PORT (worker log: $WORK/worker.log)"
# One worker thread: hypothesis' lambda introspection races in CPython 3.11's AST constructor otherwise.
SCHEMATHESIS_HOOKS=tests.fuzz.hooks "$BIN/schemathesis" run "http://127.0.0.1:$PORT/openapi.json" \
  --checks not_a_server_error,no_stack_trace --max-examples "$MAX_EXAMPLES" --workers 1 "$@"
