-- The tables the seed configs poll, as the seed users' server made them. Run after provision.sql, as
-- root, by scripts/stack.sh (`up` when kafkadb has no tables; `seed-tables` to recreate them) and by
-- tests/integration/test_jdbc_seeds.py, so that every seed JDBC config runs unchanged on the stack.
--
-- kafkadb.sql is the users' file byte for byte. Their server (MySQL 5.7) ran it with
-- explicit_defaults_for_timestamp off, which makes `modified TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE
-- ...` NOT NULL; MariaDB 10.10+ and MySQL 8 default to on (a nullable column), and then the timestamp
-- seeds stop at Confluent's non-null check. So the session turns it off before kafkadb.sql is read.
-- om.customers is the table of jdbc-incrementing-multitask.json (incrementing.column.name=customer_id).
SET SESSION explicit_defaults_for_timestamp = 0;
CREATE TABLE IF NOT EXISTS om.customers (
  customer_id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(255) NOT NULL
);
USE kafkadb;
