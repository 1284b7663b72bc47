#!/usr/bin/env bash
# The local stack of cdc's tests and demo: MariaDB (binlog, GTIDs), an Apache Kafka broker (KRaft),
# PostgreSQL (the JDBC source's second database) and a Confluent-compatible schema registry (Apicurio,
# scripts/registry.sh; CDC_STACK_REGISTRY=0 leaves it out).
#
#   scripts/stack.sh up | down | status | clean | env | seed-tables
#
# The Makefile is the door (make up / down / status / clean-stack). Without a Docker engine, each service
# is a process of ours: installed from Debian's packages or Maven Central on first use, its data, logs,
# config and pid file under $CDC_STACK_DIR (default <repo>/.stack, git-ignored). With a Docker engine
# (`docker info` answers) docker/compose.yaml runs the same services instead; CDC_STACK_BACKEND=local|docker
# forces one.
#
# `up` is idempotent: a service whose pid file names a live process that answers its probe is left alone.
# A port already answering as a cdc stack (started by another checkout) is used as it is and never stopped
# from here. `down` stops only the processes whose pid files are ours; the data stays for the next `up`.
#
# TLS: `up` makes a throwaway CA and certificates under $STACK_DIR/tls/ when they are missing (openssl;
# keytool's JKS/PKCS12 stores of them when a JDK is there); MariaDB and PostgreSQL serve TLS with them. The
# users cdc_tls/cdc_tls (MariaDB: REQUIRE SSL; cdc_x509/cdc_x509: REQUIRE X509, the client certificate) and
# the PostgreSQL role cdc_tls (hostssl only) exist for the TLS tests. A server started before its TLS
# configuration existed keeps running without it (`up` warns): `down` then `up` rewrites its configuration.
#
# Each service is a set of functions <svc>_install, <svc>_start, <svc>_probe, <svc>_provision and
# <svc>_describe; add one (postgres, schema_registry, ...) and name it in CDC_STACK_SERVICES.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK_DIR=${CDC_STACK_DIR:-$REPO/.stack}
CACHE=${CDC_CACHE:-$HOME/.cache/cdc}
SERVICES=${CDC_STACK_SERVICES:-mariadb kafka postgres}
RUN_DIR=$STACK_DIR/run

MYSQL_HOST=127.0.0.1
MYSQL_PORT=${CDC_MYSQL_PORT:-3306}
KAFKA_HOST=127.0.0.1
KAFKA_PORT=${CDC_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${CDC_KAFKA_CONTROLLER_PORT:-9093}
# an SSL listener beside PLAINTEXT (node n on KAFKA_SSL_PORT+10(n-1)), client certificates required; its
# key store and the clients' JKS trust and key stores are keytool's, under $STACK_DIR/tls (kafka_tls)
KAFKA_SSL_PORT=${CDC_KAFKA_SSL_PORT:-9095}
KAFKA_VERSION=4.4.0
KAFKA_LIBS=$CACHE/kafka-$KAFKA_VERSION/libs
KAFKA_HEAP=${CDC_KAFKA_HEAP:-512m}
# 1: one node (the tests' default); 3: a replicated KRaft cluster, node n listening on KAFKA_PORT+2(n-1)
# with its controller on the port after, topics replicated 3 times with min.insync.replicas=2
KAFKA_BROKERS=${CDC_KAFKA_BROKERS:-1}
case $KAFKA_BROKERS in 1 | 3) ;; *) echo "[stack] error: CDC_KAFKA_BROKERS must be 1 or 3" >&2; exit 2 ;; esac
# 2: a second, independent Kafka cluster (service kafka_b, one KRaft node, its own cluster id and data in
# $STACK_DIR/kafka-b) for MirrorMaker 2's flows: broker on KAFKA_B_PORT, controller on the port after
# (CDC_KAFKA_B_CONTROLLER_PORT), SSL on KAFKA_B_SSL_PORT
KAFKA_CLUSTERS=${CDC_KAFKA_CLUSTERS:-1}
case $KAFKA_CLUSTERS in 1 | 2) ;; *) echo "[stack] error: CDC_KAFKA_CLUSTERS must be 1 or 2" >&2; exit 2 ;; esac
KAFKA_B_PORT=${CDC_KAFKA_B_PORT:-9192}
KAFKA_B_CONTROLLER_PORT=${CDC_KAFKA_B_CONTROLLER_PORT:-$((KAFKA_B_PORT + 1))}
KAFKA_B_SSL_PORT=${CDC_KAFKA_B_SSL_PORT:-9195}
if [ "$KAFKA_CLUSTERS" -eq 2 ] && [[ " $SERVICES " == *" kafka "* ]] && [[ " $SERVICES " != *" kafka_b "* ]]; then
  SERVICES="${SERVICES/kafka/kafka kafka_b}"
fi

say() { printf '[stack] %s\n' "$*"; }
die() { printf '[stack] error: %s\n' "$*" >&2; exit 1; }

python_cmd() {
  if [ -x "$REPO/.venv/bin/python" ]; then echo "$REPO/.venv/bin/python"; else command -v python3; fi
}

# ---------------------------------------------------------------------------------------------- helpers

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# apt-get install, waiting for another apt/dpkg (an install may run in the background) to let go of the
# lock; `apt-get update` only when the install fails, as the package lists may be missing or stale.
apt_install() {
  local log=$STACK_DIR/apt.log opts=(-y -q -o DPkg::Lock::Timeout=1200)
  say "installing $* from Debian's packages (log: $log)"
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install "${opts[@]}" "$@" >>"$log" 2>&1; then
    say "apt-get install failed; running apt-get update and trying again"
    as_root apt-get update -q -o DPkg::Lock::Timeout=1200 >>"$log" 2>&1 || true
    as_root apt-get install "${opts[@]}" "$@" >>"$log" 2>&1 || { tail -20 "$log" >&2; die "could not install $*"; }
  fi
}

pidfile() { echo "$RUN_DIR/$1.pid"; }

# The pid of a service we started, if its process still lives (and is still that program).
our_pid() {
  local file pid
  file=$(pidfile "$1")
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  grep -qa -- "$2" "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

port_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# wait_for SECONDS DESCRIPTION COMMAND...: run COMMAND every half second until it succeeds.
wait_for() {
  local seconds=$1 deadline  # $2 only names, for the reader, what is awaited
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
    sleep 0.5
  done
}

# stop_pid NAME PATTERN: TERM the process of our pid file, KILL it after 60 s, remove the pid file.
stop_pid() {
  local name=$1 pattern=$2 pid
  if pid=$(our_pid "$name" "$pattern"); then
    say "$name: stopping (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for 60 "$name to stop" bash -c "! kill -0 $pid"; then
      say "$name: still running after 60 s, killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_for 10 "$name to die" bash -c "! kill -0 $pid" || die "$name (pid $pid) does not die"
    fi
  else
    say "$name: not running (no live process of ours)"
  fi
  rm -f "$(pidfile "$name")"
}

# -------------------------------------------------------------------------------------------------- tls
# A throwaway CA and what it signs, for the databases' TLS and the tests (tests/conftest.py reads
# $STACK_DIR/tls/ca.pem): server.pem (SAN localhost, 127.0.0.1), wronghost.pem (SAN wrong.host.invalid
# only, for host name checks), client.pem (CN cdc_x509, a client certificate); and, as Java users have
# them, truststore.{jks,p12} (the CA) and keystore.{jks,p12} (the client's key), password $TLS_STOREPASS.

TLS_DIR=$STACK_DIR/tls
TLS_STOREPASS=changeit

tls_sign() {  # tls_sign DIR NAME SUBJECT SAN EXTENDED_USAGE
  local dir=$1 name=$2
  openssl req -new -newkey rsa:2048 -nodes -subj "$3" -keyout "$dir/$name.key" -out "$dir/$name.csr" \
    2>/dev/null || die "openssl could not make $name's key"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=$5" "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid:always" \
    ${4:+"subjectAltName=$4"} >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 3650 \
    -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null || die "openssl could not sign $name.pem"
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

# Made once (a stack dir from before TLS gets them on its next `up`); written aside and moved in whole.
tls_ensure() {
  [ -f "$TLS_DIR/ca.pem" ] && [ -f "$TLS_DIR/server.pem" ] && [ -f "$TLS_DIR/wronghost.pem" ] \
    && [ -f "$TLS_DIR/client.pem" ] && return
  command -v openssl >/dev/null || apt_install openssl
  say "tls: creating a throwaway CA and certificates in $TLS_DIR"
  local tmp=$TLS_DIR.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 -subj "/CN=cdc stack test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tmp/ca.key" -out "$tmp/ca.pem" 2>/dev/null || die "openssl could not make the CA"
  tls_sign "$tmp" server "/CN=localhost" "DNS:localhost,IP:127.0.0.1" serverAuth
  tls_sign "$tmp" wronghost "/CN=wrong.host.invalid" "DNS:wrong.host.invalid" serverAuth
  tls_sign "$tmp" client "/CN=cdc_x509" "" clientAuth
  if command -v keytool >/dev/null; then
    local kind ext
    for kind in JKS PKCS12; do
      ext=$([ $kind = JKS ] && echo jks || echo p12)
      keytool -importcert -noprompt -alias ca -file "$tmp/ca.pem" -keystore "$tmp/truststore.$ext" \
        -storetype $kind -storepass "$TLS_STOREPASS" >/dev/null 2>&1 || die "keytool could not make truststore.$ext"
    done
    openssl pkcs12 -export -in "$tmp/client.pem" -inkey "$tmp/client.key" -certfile "$tmp/ca.pem" \
      -name client -passout "pass:$TLS_STOREPASS" -out "$tmp/keystore.p12" || die "openssl could not make keystore.p12"
    keytool -importkeystore -noprompt -srckeystore "$tmp/keystore.p12" -srcstoretype PKCS12 \
      -srcstorepass "$TLS_STOREPASS" -destkeystore "$tmp/keystore.jks" -deststoretype JKS \
      -deststorepass "$TLS_STOREPASS" >/dev/null 2>&1 || die "keytool could not make keystore.jks"
  fi
  chmod 600 "$tmp"/*.key
  rm -f "$tmp"/*.srl
  rm -rf "$TLS_DIR"
  mv "$tmp" "$TLS_DIR"
}

# ---------------------------------------------------------------------------------------------- mariadb

MARIADB_DIR=$STACK_DIR/mariadb
MARIADB_SOCKET=$MARIADB_DIR/mysqld.sock
MARIADB_CNF=$MARIADB_DIR/my.cnf

mariadb_install() {
  if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ]; then
    apt_install mariadb-server mariadb-client
  fi
  command -v mariadb >/dev/null || apt_install mariadb-client
}

mariadb_config() {
  mkdir -p "$MARIADB_DIR/data" "$MARIADB_DIR/tmp"
  cat >"$MARIADB_CNF" <<EOF
# written by scripts/stack.sh on every start: edit the script, not this file
[client]
socket = $MARIADB_SOCKET
default-character-set = utf8mb4

[mariadbd]
user = root
datadir = $MARIADB_DIR/data
tmpdir = $MARIADB_DIR/tmp
socket = $MARIADB_SOCKET
pid-file = $MARIADB_DIR/mariadbd.pid
log-error = $MARIADB_DIR/mariadbd.err
bind-address = $MYSQL_HOST
port = $MYSQL_PORT
skip-name-resolve

# change data capture: full row images with column names, GTIDs
server_id = 1
log_bin = $MARIADB_DIR/data/binlog
binlog_format = ROW
binlog_row_image = FULL
binlog_row_metadata = FULL
gtid_domain_id = 0
gtid_strict_mode = ON
log_slave_updates = ON
expire_logs_days = 3

max_connections = 500
innodb_buffer_pool_size = 512M
# tests, not durability
innodb_flush_log_at_trx_commit = 2
sync_binlog = 0
performance_schema = OFF

character_set_server = utf8mb4
collation_server = utf8mb4_general_ci

# TLS offered to every client (the users cdc_tls and cdc_x509 require it)
ssl_ca = $TLS_DIR/ca.pem
ssl_cert = $TLS_DIR/server.pem
ssl_key = $TLS_DIR/server.key
EOF
}

mariadb_start() {
  tls_ensure
  mariadb_config
  if [ ! -d "$MARIADB_DIR/data/mysql" ]; then
    say "mariadb: creating the data directory $MARIADB_DIR/data"
    mariadb-install-db --defaults-file="$MARIADB_CNF" --user=root --skip-test-db \
      --auth-root-authentication-method=socket >"$MARIADB_DIR/install-db.log" 2>&1 \
      || { tail -20 "$MARIADB_DIR/install-db.log" >&2; die "mariadb-install-db failed"; }
  fi
  # setsid: the server outlives make and ignores the terminal's Ctrl-C; without job control the
  # background child is no group leader, so setsid execs in place and $! is mariadbd's own pid.
  # 9>&-: the server must not inherit (and so hold for ever) the lock of `up`.
  setsid mariadbd --defaults-file="$MARIADB_CNF" --user=root </dev/null >>"$MARIADB_DIR/mariadbd.out" 2>&1 9>&- &
  echo $! >"$(pidfile mariadb)"
}

mariadb_probe() {
  mariadb --protocol=TCP -h "$MYSQL_HOST" -P "$MYSQL_PORT" -ucdc -pcdc --connect-timeout=2 -N -e 'SELECT 1' \
    >/dev/null 2>&1
}

# Whether the server answers at all (before provisioning created the cdc user): over our socket as root.
mariadb_probe_root() {
  mariadb --socket="$MARIADB_SOCKET" -uroot --connect-timeout=2 -N -e 'SELECT 1' >/dev/null 2>&1
}

mariadb_wait() { wait_for "${1:-120}" "mariadb" mariadb_probe_root; }

mariadb_provision() {
  mariadb --socket="$MARIADB_SOCKET" -uroot <"$REPO/scripts/sql/provision.sql"
  local tables
  tables=$(mariadb --socket="$MARIADB_SOCKET" -uroot -N -e \
    "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'kafkadb'")
  if [ "$tables" = 0 ]; then
    say "mariadb: creating the seed tables (kafkadb, om.customers)"
    seed_tables
  fi
}

# The seed configs' tables as their users' server made them: scripts/sql/seed-tables.sql (session settings,
# om.customers), then the users' kafkadb.sql unchanged, in one session. `drop` recreates them (empty).
seed_tables() {
  local drop=""
  [ "${1:-}" = drop ] && drop="DROP TABLE IF EXISTS kafkadb.customers, kafkadb.products, kafkadb.orders,
    kafkadb.bulk_tab, kafkadb.multitab1, kafkadb.multitab2, om.customers;"
  local login=(--socket="$MARIADB_SOCKET" -uroot)
  # a server started from another checkout (its socket elsewhere): the cdc user has ALL on *.*
  [ -S "$MARIADB_SOCKET" ] || login=(-h "$MYSQL_HOST" -P "$MYSQL_PORT" -ucdc -pcdc)
  { echo "$drop"; cat "$REPO/scripts/sql/seed-tables.sql" "$REPO/scripts/sql/kafkadb.sql"; } \
    | mariadb "${login[@]}"
}

# A server running since before the stack had TLS: say how to upgrade it.
mariadb_check() {
  local have
  have=$(mariadb --protocol=TCP -h "$MYSQL_HOST" -P "$MYSQL_PORT" -ucdc -pcdc --connect-timeout=2 -N \
    -e "SELECT @@have_ssl" 2>/dev/null) || return 0
  [ "$have" = YES ] || say "mariadb: WARNING: running without TLS (started before the stack had it); run down, then up"
}

mariadb_log() { echo "$MARIADB_DIR/mariadbd.err"; }
mariadb_port() { echo "$MYSQL_HOST $MYSQL_PORT"; }
mariadb_pattern() { echo mariadbd; }
mariadb_describe() {
  echo "MariaDB on $MYSQL_HOST:$MYSQL_PORT (users cdc/cdc, kafka/kafka123, connect_dev/connect_dev, cdc_tls/cdc_tls over TLS only; CA $TLS_DIR/ca.pem; socket $MARIADB_SOCKET)"
}

# ------------------------------------------------------------------------------------------------ kafka

KAFKA_DIR=$STACK_DIR/kafka
if [ "$KAFKA_BROKERS" -gt 1 ]; then KAFKA_DIR=$STACK_DIR/kafka-cluster; fi
KAFKA_NAME=kafka  # node 1's pid file; kafka_b_scope names its own
KAFKA_RF=$((KAFKA_BROKERS < 3 ? KAFKA_BROKERS : 3))
KAFKA_MIN_ISR=$((KAFKA_RF > 1 ? KAFKA_RF - 1 : 1))

# node n (1-based): its directory, its broker and controller ports, its pid file's name
kafka_node_dir() { if [ "$KAFKA_BROKERS" -eq 1 ]; then echo "$KAFKA_DIR"; else echo "$KAFKA_DIR/node$1"; fi; }
kafka_node_port() { echo $((KAFKA_PORT + 2 * ($1 - 1))); }
kafka_node_controller() {
  if [ "$KAFKA_BROKERS" -eq 1 ]; then echo "$KAFKA_CONTROLLER_PORT"; else echo $((KAFKA_PORT + 2 * ($1 - 1) + 1)); fi
}
kafka_node_ssl_port() { echo $((KAFKA_SSL_PORT + 10 * ($1 - 1))); }
kafka_node_name() { if [ "$1" -eq 1 ]; then echo "$KAFKA_NAME"; else echo "$KAFKA_NAME-$1"; fi; }
kafka_voters() {
  local n voters=""
  for n in $(seq 1 "$KAFKA_BROKERS"); do voters+="${voters:+,}$n@$KAFKA_HOST:$(kafka_node_controller "$n")"; done
  echo "$voters"
}
kafka_bootstrap() {
  local n out=""
  for n in $(seq 1 "$KAFKA_BROKERS"); do out+="${out:+,}$KAFKA_HOST:$(kafka_node_port "$n")"; done
  echo "$out"
}

kafka_install() {
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  if [ ! -f "$KAFKA_LIBS/kafka_2.13-$KAFKA_VERSION.jar" ]; then
    command -v mvn >/dev/null || apt_install maven
    say "kafka: fetching Apache Kafka $KAFKA_VERSION's jars from Maven Central into $KAFKA_LIBS"
    local tmp=$KAFKA_LIBS.tmp.$$
    rm -rf "$tmp"
    mkdir -p "$(dirname "$KAFKA_LIBS")"
    mvn -q -B -f "$REPO/scripts/kafka/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$tmp" >"$STACK_DIR/maven.log" 2>&1 \
      || { tail -30 "$STACK_DIR/maven.log" >&2; rm -rf "$tmp"; die "maven could not fetch Kafka's jars"; }
    rm -rf "$KAFKA_LIBS"
    mv "$tmp" "$KAFKA_LIBS"
  fi
}

# The broker's key store (server.pem and its key, alias kafka) as keytool makes it for a Java broker, beside
# tls_ensure's truststore.jks/keystore.jks that clients use; password $TLS_STOREPASS.
kafka_tls() {
  tls_ensure
  [ -f "$TLS_DIR/broker.keystore.jks" ] && return
  local tmp=$TLS_DIR/broker.tmp.$$
  mkdir -p "$tmp"
  openssl pkcs12 -export -in "$TLS_DIR/server.pem" -inkey "$TLS_DIR/server.key" -certfile "$TLS_DIR/ca.pem" \
    -name kafka -passout "pass:$TLS_STOREPASS" -out "$tmp/broker.p12" || die "openssl could not make broker.p12"
  keytool -importkeystore -noprompt -srckeystore "$tmp/broker.p12" -srcstoretype PKCS12 \
    -srcstorepass "$TLS_STOREPASS" -destkeystore "$tmp/broker.keystore.jks" -deststoretype JKS \
    -deststorepass "$TLS_STOREPASS" >/dev/null 2>&1 || die "keytool could not make broker.keystore.jks"
  mv "$tmp/broker.keystore.jks" "$TLS_DIR/broker.keystore.jks"
  rm -rf "$tmp"
}

kafka_config() {
  local n=$1 dir port controller ssl_port
  dir=$(kafka_node_dir "$n") port=$(kafka_node_port "$n") controller=$(kafka_node_controller "$n")
  ssl_port=$(kafka_node_ssl_port "$n")
  kafka_tls
  mkdir -p "$dir/data" "$dir/logs"
  cat >"$dir/server.properties" <<EOF
# written by scripts/stack.sh on every start: edit the script, not this file
# node $n of $KAFKA_BROKERS, broker and controller in one process (KRaft)
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$(kafka_voters)
listeners=PLAINTEXT://$KAFKA_HOST:$port,CONTROLLER://$KAFKA_HOST:$controller,SSL://$KAFKA_HOST:$ssl_port
advertised.listeners=PLAINTEXT://$KAFKA_HOST:$port,SSL://$KAFKA_HOST:$ssl_port
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL

# the SSL listener: the broker's JKS key store, client certificates signed by the stack's CA required
listener.name.ssl.ssl.keystore.type=JKS
listener.name.ssl.ssl.keystore.location=$TLS_DIR/broker.keystore.jks
listener.name.ssl.ssl.keystore.password=$TLS_STOREPASS
listener.name.ssl.ssl.key.password=$TLS_STOREPASS
listener.name.ssl.ssl.truststore.type=JKS
listener.name.ssl.ssl.truststore.location=$TLS_DIR/truststore.jks
listener.name.ssl.ssl.truststore.password=$TLS_STOREPASS
listener.name.ssl.ssl.client.auth=required
log.dirs=$dir/data
num.network.threads=3
num.io.threads=4

# as a user's cluster has them
auto.create.topics.enable=true
delete.topic.enable=true
num.partitions=1
default.replication.factor=$KAFKA_RF
min.insync.replicas=$KAFKA_MIN_ISR
offsets.topic.replication.factor=$KAFKA_RF
transaction.state.log.replication.factor=$KAFKA_RF
transaction.state.log.min.isr=$KAFKA_MIN_ISR
share.coordinator.state.topic.replication.factor=$KAFKA_RF
share.coordinator.state.topic.min.isr=$KAFKA_MIN_ISR
group.initial.rebalance.delay.ms=0
log.retention.hours=168

# compaction that happens within seconds, for tests (topics set segment.ms, min.cleanable.dirty.ratio)
log.cleaner.enable=true
log.cleaner.threads=1
log.cleaner.backoff.ms=500
log.cleaner.min.compaction.lag.ms=0
log.cleaner.dedupe.buffer.size=33554432
log.retention.check.interval.ms=5000
log.segment.delete.delay.ms=1000
log.initial.task.delay.ms=1000
EOF
  cat >"$dir/log4j2.properties" <<EOF
# written by scripts/stack.sh
status = warn
appender.server.type = RollingFile
appender.server.name = SERVER
appender.server.fileName = $dir/logs/server.log
appender.server.filePattern = $dir/logs/server.log.%i
appender.server.layout.type = PatternLayout
appender.server.layout.pattern = [%d] %p %m (%c)%n
appender.server.policies.type = Policies
appender.server.policies.size.type = SizeBasedTriggeringPolicy
appender.server.policies.size.size = 50MB
appender.server.strategy.type = DefaultRolloverStrategy
appender.server.strategy.max = 3
rootLogger.level = INFO
rootLogger.appenderRef.server.ref = SERVER
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = INFO
EOF
}

kafka_java() {
  local dir=$1
  shift
  java -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir/logs" \
    -Djava.awt.headless=true -cp "$KAFKA_LIBS/*" "$@"
}

# Every node not running yet (a quorum of three needs its voters up before any answers), one cluster id.
kafka_start() {
  local n dir cluster_id=""
  mkdir -p "$KAFKA_DIR"
  [ ! -f "$KAFKA_DIR/cluster.id" ] || cluster_id=$(cat "$KAFKA_DIR/cluster.id")
  for n in $(seq 1 "$KAFKA_BROKERS"); do
    dir=$(kafka_node_dir "$n")
    if our_pid "$(kafka_node_name "$n")" kafka.Kafka >/dev/null; then continue; fi
    kafka_config "$n"
    if [ ! -f "$dir/data/meta.properties" ]; then
      if [ -z "$cluster_id" ]; then
        cluster_id=$(kafka_java "$dir" kafka.tools.StorageTool random-uuid 2>>"$dir/format.log")
        echo "$cluster_id" >"$KAFKA_DIR/cluster.id"
      fi
      say "$KAFKA_NAME: formatting $dir/data (cluster id $cluster_id)"
      kafka_java "$dir" kafka.tools.StorageTool format --cluster-id "$cluster_id" \
        --config "$dir/server.properties" >>"$dir/format.log" 2>&1 \
        || { tail -20 "$dir/format.log" >&2; die "kafka storage format failed"; }
    fi
    setsid java -Xms"$KAFKA_HEAP" -Xmx"$KAFKA_HEAP" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
      -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.logs.dir="$dir/logs" \
      -Djava.awt.headless=true -cp "$KAFKA_LIBS/*" kafka.Kafka "$dir/server.properties" \
      </dev/null >>"$dir/logs/kafka.out" 2>&1 9>&- &
    echo $! >"$(pidfile "$(kafka_node_name "$n")")"
  done
}

# Every node answers, each naming all of them.
kafka_probe() {
  local n
  for n in $(seq 1 "$KAFKA_BROKERS"); do
    "$(python_cmd)" "$REPO/scripts/kafka_probe.py" "$KAFKA_HOST:$(kafka_node_port "$n")" --timeout 2 \
      --brokers "$KAFKA_BROKERS" 2>/dev/null || return 1
  done
}
kafka_wait() { wait_for "${1:-120}" "kafka" kafka_probe; }
kafka_provision() { :; }
kafka_log() { echo "$(kafka_node_dir 1)/logs/server.log"; }
kafka_port() { echo "$KAFKA_HOST $KAFKA_PORT"; }
kafka_pattern() { echo kafka.Kafka; }
# the pid files beyond the service's own (nodes 2 and 3), stopped with it
kafka_members() { local n; for n in $(seq 2 "$KAFKA_BROKERS"); do kafka_node_name "$n"; done; }
kafka_describe() {
  if [ "$KAFKA_BROKERS" -eq 1 ]; then
    echo "Apache Kafka $KAFKA_VERSION (KRaft) on $KAFKA_HOST:$KAFKA_PORT, controller on $KAFKA_HOST:$KAFKA_CONTROLLER_PORT, SSL (client certificates required; $TLS_DIR/truststore.jks and keystore.jks, password $TLS_STOREPASS) on $KAFKA_HOST:$KAFKA_SSL_PORT"
  else
    echo "Apache Kafka $KAFKA_VERSION (KRaft), $KAFKA_BROKERS nodes on $(kafka_bootstrap) (each one's controller on the next port), replication factor $KAFKA_RF, min.insync.replicas $KAFKA_MIN_ISR"
  fi
}

# ---------------------------------------------------------------------------------------------- kafka_b
# The second cluster (CDC_KAFKA_CLUSTERS=2): the kafka functions above, run with this cluster's directory,
# ports and pid file in place of the first's (bash's locals are seen by the functions they call). One
# node, replication factor 1; its own cluster id, so the two are as independent as two data centres.

kafka_b_scope() {
  local KAFKA_NAME=kafka_b KAFKA_DIR=$STACK_DIR/kafka-b KAFKA_BROKERS=1 KAFKA_RF=1 KAFKA_MIN_ISR=1
  local KAFKA_PORT=$KAFKA_B_PORT KAFKA_CONTROLLER_PORT=$KAFKA_B_CONTROLLER_PORT KAFKA_SSL_PORT=$KAFKA_B_SSL_PORT
  "$@"
}
kafka_b_install() { kafka_install; }
kafka_b_start() { kafka_b_scope kafka_start; }
kafka_b_probe() { kafka_b_scope kafka_probe; }
kafka_b_wait() { kafka_b_scope kafka_wait "$@"; }
kafka_b_provision() { :; }
kafka_b_log() { kafka_b_scope kafka_log; }
kafka_b_port() { echo "$KAFKA_HOST $KAFKA_B_PORT"; }
kafka_b_pattern() { echo kafka.Kafka; }
kafka_b_describe() {
  echo "Apache Kafka $KAFKA_VERSION (KRaft), the second cluster, on $KAFKA_HOST:$KAFKA_B_PORT, controller on $KAFKA_HOST:$KAFKA_B_CONTROLLER_PORT, SSL on $KAFKA_HOST:$KAFKA_B_SSL_PORT; data in $STACK_DIR/kafka-b"
}

# --------------------------------------------------------------------------------------------- postgres
# PostgreSQL for the JDBC source's tests (Debian's postgresql package): a cluster of our own in
# $STACK_DIR/postgres, owned by the postgres OS user when we run as root, started with pg_ctl on
# 127.0.0.1:$POSTGRES_PORT, with a cdc/cdc superuser and a database cdc. Self-contained: only this block
# and its name in SERVICES belong to it.

POSTGRES_DIR=$STACK_DIR/postgres
POSTGRES_HOST=127.0.0.1
POSTGRES_PORT=${CDC_POSTGRES_PORT:-5432}

postgres_bin() { find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1; }
postgres_as() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
postgres_install() { [ -n "$(postgres_bin)" ] || apt_install postgresql; }

postgres_start() {
  local bin
  bin=$(postgres_bin)
  mkdir -p "$POSTGRES_DIR"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$POSTGRES_DIR"; fi
  if [ ! -f "$POSTGRES_DIR/data/PG_VERSION" ]; then
    say "postgres: creating the cluster $POSTGRES_DIR/data"
    postgres_as "$bin/initdb" -D "$POSTGRES_DIR/data" -U postgres -E UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=scram-sha-256 >"$STACK_DIR/postgres-initdb.log" 2>&1 \
      || { tail -20 "$STACK_DIR/postgres-initdb.log" >&2; die "initdb failed"; }
  fi
  postgres_tls
  local tls="-c ssl=on -c ssl_cert_file=$POSTGRES_DIR/tls/server.pem -c ssl_key_file=$POSTGRES_DIR/tls/server.key"
  tls+=" -c ssl_ca_file=$POSTGRES_DIR/tls/ca.pem"
  # pg_ctl forks the server and returns once it accepts connections; the postmaster's pid is ours.
  postgres_as "$bin/pg_ctl" -D "$POSTGRES_DIR/data" -l "$POSTGRES_DIR/postgres.log" -w -t 120 \
    -o "-h $POSTGRES_HOST -p $POSTGRES_PORT -k $POSTGRES_DIR -c fsync=off -c max_connections=200 $tls" \
    start </dev/null >>"$STACK_DIR/postgres-pg_ctl.log" 2>&1 9>&- || true
  head -1 "$POSTGRES_DIR/data/postmaster.pid" >"$(pidfile postgres)" 2>/dev/null || true
}

# The server's certificate and key where the server's user owns them (it refuses a key others can read),
# and pg_hba.conf rules, ahead of initdb's, that admit the role cdc_tls over TLS only.
postgres_tls() {
  local hba=$POSTGRES_DIR/data/pg_hba.conf f
  tls_ensure
  mkdir -p "$POSTGRES_DIR/tls"
  for f in ca.pem server.pem server.key; do cp "$TLS_DIR/$f" "$POSTGRES_DIR/tls/$f"; done
  chmod 600 "$POSTGRES_DIR/tls/server.key"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$POSTGRES_DIR/tls"; fi
  if ! grep -q '^# cdc stack: cdc_tls' "$hba"; then
    { printf '%s\n' "# cdc stack: cdc_tls only over TLS (scripts/stack.sh)" \
        "hostssl all cdc_tls 127.0.0.1/32 scram-sha-256" "host all cdc_tls all reject"; cat "$hba"; } >"$hba.new"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$hba.new"; fi
    chmod 600 "$hba.new"
    mv "$hba.new" "$hba"
  fi
}

postgres_check() {
  PGPASSWORD=cdc PGCONNECT_TIMEOUT=2 psql -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U cdc -d cdc -tAc 'SHOW ssl' \
    2>/dev/null | grep -qx on \
    || say "postgres: WARNING: running without TLS (started before the stack had it); run down, then up"
}

postgres_probe() {
  PGPASSWORD=cdc PGCONNECT_TIMEOUT=2 psql -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -U cdc -d cdc -tAc 'SELECT 1' \
    >/dev/null 2>&1
}
postgres_wait() { wait_for "${1:-120}" "postgres" pg_isready -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" -t 2; }
postgres_provision() {
  postgres_as psql -h "$POSTGRES_DIR" -p "$POSTGRES_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q <<'SQL'
SELECT 'CREATE ROLE cdc LOGIN SUPERUSER PASSWORD ''cdc''' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cdc')
\gexec
SELECT 'CREATE DATABASE cdc OWNER cdc' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'cdc')
\gexec
SELECT 'CREATE ROLE cdc_tls LOGIN SUPERUSER PASSWORD ''cdc_tls''' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cdc_tls')
\gexec
SQL
}
postgres_log() { echo "$POSTGRES_DIR/postgres.log"; }
postgres_port() { echo "$POSTGRES_HOST $POSTGRES_PORT"; }
postgres_pattern() { echo postgres; }
postgres_describe() {
  echo "PostgreSQL $("$(postgres_bin)/postgres" --version | awk '{print $3}') on $POSTGRES_HOST:$POSTGRES_PORT (superuser cdc/cdc, database cdc; cdc_tls/cdc_tls over TLS only)"
}

# ------------------------------------------------------------------------------------- local backend

service_up() {
  local svc=$1 pid
  if pid=$(our_pid "$svc" "$("${svc}"_pattern)"); then
    if "${svc}"_probe; then
      say "$svc: already running (pid $pid)"
      if declare -F "${svc}_check" >/dev/null; then "${svc}_check"; fi
      return
    fi
    say "$svc: running (pid $pid) but not answering yet; waiting"
    "${svc}"_wait || die "$svc (pid $pid) does not answer; see $("${svc}"_log)"
    "${svc}"_provision
    return
  fi
  # shellcheck disable=SC2046
  if port_busy $("${svc}"_port); then
    if "${svc}"_probe; then
      say "$svc: $(set -- $("${svc}"_port); echo "$1:$2") answers already (not started from $STACK_DIR; never stopped from here)"
      return
    fi
    die "$svc: port $("${svc}"_port) is taken by a process that is not a cdc stack's $svc"
  fi
  "${svc}"_install
  local started=$SECONDS
  "${svc}"_start
  if ! "${svc}"_wait 180; then
    tail -30 "$("${svc}"_log)" >&2 || true
    die "$svc did not answer within 180 s; see $("${svc}"_log)"
  fi
  "${svc}"_provision
  say "$svc: up in $((SECONDS - started)) s (pid $(cat "$(pidfile "$svc")")): $("${svc}"_describe)"
}

local_up() {
  local svc
  say "backend: local processes (no Docker engine); state in $STACK_DIR"
  for svc in $SERVICES; do service_up "$svc"; done
  if registry_wanted; then CDC_STACK_DIR=$STACK_DIR "$REPO/scripts/registry.sh" start; fi
}

registry_wanted() { [ "${CDC_STACK_REGISTRY:-1}" != 0 ]; }

# the further pid files of a service of several processes (<svc>_members), none for the others
members() { if declare -F "$1_members" >/dev/null; then "$1_members"; fi; }

local_down() {
  local svc member
  if registry_wanted; then CDC_STACK_DIR=$STACK_DIR "$REPO/scripts/registry.sh" stop; fi
  # in reverse order of start
  for svc in $(echo "$SERVICES" | tr ' ' '\n' | tac); do
    # a service's processes stop together: a KRaft node stopped after the others loses its quorum and
    # waits a minute for a controlled shutdown nobody grants
    for member in $svc $(members "$svc"); do stop_pid "$member" "$("${svc}"_pattern)" & done
    wait
  done
}

local_status() {
  local svc pid rc=0
  say "backend: local processes; state in $STACK_DIR"
  for svc in $SERVICES; do
    if pid=$(our_pid "$svc" "$("${svc}"_pattern)"); then
      if "${svc}"_probe; then say "$svc: up (pid $pid): $("${svc}"_describe)"
      else say "$svc: running (pid $pid) but not answering"; rc=3; fi
    elif "${svc}"_probe; then
      # shellcheck disable=SC2046
      say "$svc: answering on $(set -- $("${svc}"_port); echo "$1:$2"), but not started from $STACK_DIR"
    else
      say "$svc: down"; rc=3
    fi
  done
  if registry_wanted; then
    CDC_STACK_DIR=$STACK_DIR "$REPO/scripts/registry.sh" status || rc=3
  fi
  return $rc
}

# ------------------------------------------------------------------------------------ docker backend

COMPOSE=(docker compose -f "$REPO/docker/compose.yaml")

docker_answers() {
  command -v docker >/dev/null 2>&1 && timeout 15 docker info >/dev/null 2>&1 \
    && docker compose version >/dev/null 2>&1
}

backend() {
  case ${CDC_STACK_BACKEND:-auto} in
    local | docker) echo "$CDC_STACK_BACKEND" ;;
    auto) if docker_answers; then echo docker; else echo local; fi ;;
    *) die "CDC_STACK_BACKEND must be local, docker or auto" ;;
  esac
}

docker_up() {
  say "backend: docker compose ($REPO/docker/compose.yaml)"
  [ "$KAFKA_CLUSTERS" -eq 1 ] || die "CDC_KAFKA_CLUSTERS=2: the second cluster runs with the local backend only (CDC_STACK_BACKEND=local)"
  "${COMPOSE[@]}" up -d --wait mysql kafka schema-registry
}

# ------------------------------------------------------------------------------------------------ main

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd=${1:-}
  mkdir -p "$STACK_DIR" "$RUN_DIR"
  # a second cluster that an earlier `CDC_KAFKA_CLUSTERS=2 up` started is stopped and shown without the variable
  case $cmd in
    down | status | clean)
      if [ -f "$(pidfile kafka_b)" ] && [[ " $SERVICES " == *" kafka "* ]] && [[ " $SERVICES " != *" kafka_b "* ]]; then
        SERVICES="${SERVICES/kafka/kafka kafka_b}"
      fi
      ;;
  esac
  case $cmd in
    up)
      # one `up` at a time (make up and a test session's fixture may race)
      exec 9>"$STACK_DIR/.lock"
      flock 9
      if [ "$(backend)" = docker ]; then docker_up; else local_up; fi
      say "stack is up"
      ;;
    down)
      exec 9>"$STACK_DIR/.lock"
      flock 9
      if [ "$(backend)" = docker ]; then "${COMPOSE[@]}" stop; else local_down; fi
      ;;
    status)
      if [ "$(backend)" = docker ]; then "${COMPOSE[@]}" ps; else local_status; fi
      ;;
    clean)
      main down
      if [ "$(backend)" = docker ]; then "${COMPOSE[@]}" down -v; fi
      say "removing $STACK_DIR"
      rm -rf "$STACK_DIR"
      ;;
    seed-tables)
      # recreate the seed configs' tables, empty, as their users' server made them (docs: README)
      [ "$(backend)" = docker ] && die "seed-tables: the docker backend creates them at its first start"
      seed_tables drop
      say "seed tables recreated (kafkadb: customers products orders bulk_tab multitab1 multitab2; om.customers)"
      ;;
    env)
      # what the tests read (tests/conftest.py), for `eval "$(scripts/stack.sh env)"`
      echo "export CDC_MYSQL_HOST=$MYSQL_HOST CDC_MYSQL_PORT=$MYSQL_PORT"
      echo "export CDC_KAFKA_BOOTSTRAP=$(kafka_bootstrap)"
      if [[ " $SERVICES " == *" kafka_b "* ]]; then echo "export CDC_KAFKA_B_BOOTSTRAP=$KAFKA_HOST:$KAFKA_B_PORT"; fi
      ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
