#!/usr/bin/env bash
# `make demo`: show that the local stack answers. Later this captures changes end to end; for now it
# writes a row, shows the binlog position and GTID that write produced, and lists Kafka's topics.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=$REPO/.venv/bin/python
[ -x "$PY" ] || PY=python3
MYSQL=(mariadb --protocol=TCP -h "${CDC_MYSQL_HOST:-127.0.0.1}" -P "${CDC_MYSQL_PORT:-3306}" -ucdc -pcdc)
BOOTSTRAP=${CDC_KAFKA_BOOTSTRAP:-127.0.0.1:9092}

# a database of the demo's own: the seed databases (kafkadb, om, ops) stay as the tests expect them
echo "== MariaDB: a row into cdc_demo.customers"
"${MYSQL[@]}" -e "CREATE DATABASE IF NOT EXISTS cdc_demo; CREATE TABLE IF NOT EXISTS cdc_demo.customers (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL,
  created TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)"
"${MYSQL[@]}" cdc_demo -e "INSERT INTO customers(name) VALUES (CONCAT('demo at ', NOW()))"
"${MYSQL[@]}" cdc_demo -t -e "SELECT * FROM customers ORDER BY id DESC LIMIT 3"
echo "== MariaDB: SHOW MASTER STATUS, GTID position, binlog settings"
"${MYSQL[@]}" -t -e "SHOW MASTER STATUS"
"${MYSQL[@]}" -t -e "SELECT @@gtid_binlog_pos AS gtid_binlog_pos, @@binlog_format AS format,
  @@binlog_row_image AS row_image, @@binlog_row_metadata AS row_metadata"

echo "== Kafka at $BOOTSTRAP: topics"
"$PY" - "$BOOTSTRAP" <<'EOF'
import sys

try:
    from confluent_kafka.admin import AdminClient
except ImportError:  # no .venv yet: the standard-library probe
    import subprocess

    sys.exit(subprocess.call([sys.executable, "scripts/kafka_probe.py", sys.argv[1], "--list"]))
metadata = AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=10)
print(f"cluster {metadata.cluster_id}, brokers {sorted(str(b) for b in metadata.brokers.values())}")
for name in sorted(metadata.topics):
    print(f"  {name} ({len(metadata.topics[name].partitions)} partitions)")
if not metadata.topics:
    print("  (no topics yet)")
EOF
