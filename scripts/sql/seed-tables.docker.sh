# docker/compose.yaml's MySQL sources this once, at its first start (docker-entrypoint-initdb.d), after
# provision.sql: the seed tables as scripts/stack.sh makes them, seed-tables.sql then the users' kafkadb.sql
# in one session (the session setting must hold while kafkadb.sql runs).
cat /cdc-seed/seed-tables.sql /cdc-seed/kafkadb.sql | docker_process_sql
