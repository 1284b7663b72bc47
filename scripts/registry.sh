#!/usr/bin/env bash
# A Confluent-compatible schema registry for tests: Apicurio Registry 2.6 (in-memory storage), whose
# Confluent API lives under http://127.0.0.1:${CDC_REGISTRY_PORT:-8081}/apis/ccompat/v7.
#
#   scripts/registry.sh start | stop | status | url
#
# The app comes from Maven Central (io.apicurio:apicurio-registry-app:2.6.13.Final, classifier "all",
# a Quarkus fast-jar layout in a tar.gz); Apicurio 3.x needs Java 21, and this machine has Java 17.
# It is unpacked once under ${CDC_CACHE:-$HOME/.cache/cdc}; pid, log and data live in .stack/registry.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CDC_CACHE:-$HOME/.cache/cdc}
STACK_DIR=${CDC_STACK_DIR:-$REPO/.stack}
DIR=$STACK_DIR/registry
PORT=${CDC_REGISTRY_PORT:-8081}
VERSION=2.6.13.Final
APP=$CACHE/apicurio-registry-$VERSION
JAR=$APP/apicurio-registry-app-$VERSION-runner.jar
PIDFILE=$DIR/registry.pid
LOG=$DIR/registry.log
URL=http://127.0.0.1:$PORT/apis/ccompat/v7

say() { printf '[registry] %s\n' "$*"; }
die() { printf '[registry] error: %s\n' "$*" >&2; exit 1; }

install() {
  [ -f "$JAR" ] && return 0
  command -v mvn >/dev/null || die "mvn is needed to fetch Apicurio Registry from Maven Central"
  command -v java >/dev/null || die "java (17+) is needed to run Apicurio Registry"
  say "fetching io.apicurio:apicurio-registry-app:$VERSION (tar.gz, classifier all) from Maven Central"
  mkdir -p "$CACHE" "$DIR"
  mvn -q dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$VERSION:tar.gz:all" \
      -DoutputDirectory="$CACHE" >>"$DIR/install.log" 2>&1 || { tail -20 "$DIR/install.log" >&2; die "download failed"; }
  mkdir -p "$APP.tmp" && tar xzf "$CACHE/apicurio-registry-app-$VERSION-all.tar.gz" -C "$APP.tmp"
  rm -rf "$APP" && mv "$APP.tmp" "$APP" && rm -f "$CACHE/apicurio-registry-app-$VERSION-all.tar.gz"
}

probe() { curl -fsS -m 2 "$URL/subjects" >/dev/null 2>&1; }

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  if running && probe; then say "running (pid $(cat "$PIDFILE")) at $URL"; return 0; fi
  if probe; then say "a registry already answers at $URL; using it"; return 0; fi
  install
  mkdir -p "$DIR"
  # 9>&-: called from `stack.sh up`, which holds its lock on fd 9; the registry must not inherit it.
  ( cd "$DIR" && exec java -Xmx384m -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$PORT" \
      -Dquarkus.log.level=WARN -jar "$JAR" >"$LOG" 2>&1 9>&- ) 9>&- &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 120); do
    if probe; then say "started (pid $(cat "$PIDFILE")) at $URL"; return 0; fi
    running || { tail -20 "$LOG" >&2; die "the registry exited"; }
    sleep 0.5
  done
  tail -20 "$LOG" >&2; die "the registry did not answer within 60 s"
}

stop() {
  if running; then
    local pid; pid=$(cat "$PIDFILE")
    kill "$pid" && for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    say "stopped (pid $pid)"
  else
    say "not running"
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running && probe; then say "running (pid $(cat "$PIDFILE")) at $URL"; else say "not running"; exit 1; fi ;;
  url) echo "$URL" ;;
  *) echo "usage: $0 start|stop|status|url" >&2; exit 2 ;;
esac
