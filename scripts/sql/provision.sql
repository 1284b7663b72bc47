-- Users and databases of the local stack. Idempotent: scripts/stack.sh runs it on every start of
-- MariaDB (as root over the socket); docker/compose.yaml runs it once when MySQL 8.4 initialises.
-- Only statements that MariaDB 10.11 and MySQL 8.4 both accept.

-- Anonymous users would shadow 'cdc'@'%' for connections from localhost.
DROP USER IF EXISTS ''@'localhost';

CREATE DATABASE IF NOT EXISTS kafkadb CHARACTER SET utf8mb4;
CREATE DATABASE IF NOT EXISTS om CHARACTER SET utf8mb4;
CREATE DATABASE IF NOT EXISTS ops CHARACTER SET utf8mb4;

-- cdc/cdc: our connectors and tests. The grants Debezium documents for its MySQL connector, and ALL
-- on *.* so that tests can create and drop a database each.
CREATE USER IF NOT EXISTS 'cdc'@'%' IDENTIFIED BY 'cdc';
CREATE USER IF NOT EXISTS 'cdc'@'localhost' IDENTIFIED BY 'cdc';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'cdc'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'cdc'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'cdc'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'cdc'@'localhost';

-- kafka/kafka123: the user of the JDBC source seed configs (connection.url ...kafkadb?user=kafka&password=kafka123).
CREATE USER IF NOT EXISTS 'kafka'@'%' IDENTIFIED BY 'kafka123';
CREATE USER IF NOT EXISTS 'kafka'@'localhost' IDENTIFIED BY 'kafka123';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'kafka'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'kafka'@'localhost';
GRANT ALL PRIVILEGES ON kafkadb.* TO 'kafka'@'%';
GRANT ALL PRIVILEGES ON kafkadb.* TO 'kafka'@'localhost';

-- connect_dev/connect_dev: the user of the Debezium (database ops) and JDBC (database om) seed configs.
CREATE USER IF NOT EXISTS 'connect_dev'@'%' IDENTIFIED BY 'connect_dev';
CREATE USER IF NOT EXISTS 'connect_dev'@'localhost' IDENTIFIED BY 'connect_dev';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'connect_dev'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'connect_dev'@'localhost';
GRANT ALL PRIVILEGES ON om.* TO 'connect_dev'@'%';
GRANT ALL PRIVILEGES ON om.* TO 'connect_dev'@'localhost';
GRANT ALL PRIVILEGES ON ops.* TO 'connect_dev'@'%';
GRANT ALL PRIVILEGES ON ops.* TO 'connect_dev'@'localhost';

-- cdc_tls/cdc_tls: the TLS tests' user, refused over plain connections (REQUIRE SSL); Debezium's grants
-- and ALL, as cdc. cdc_x509/cdc_x509 also needs a client certificate signed by the stack's CA (REQUIRE X509).
-- ALTER: a stack provisioned before these requirements existed gets them.
CREATE USER IF NOT EXISTS 'cdc_tls'@'%' IDENTIFIED BY 'cdc_tls';
CREATE USER IF NOT EXISTS 'cdc_tls'@'localhost' IDENTIFIED BY 'cdc_tls';
ALTER USER 'cdc_tls'@'%' REQUIRE SSL;
ALTER USER 'cdc_tls'@'localhost' REQUIRE SSL;
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'cdc_tls'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO 'cdc_tls'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'cdc_tls'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'cdc_tls'@'localhost';
CREATE USER IF NOT EXISTS 'cdc_x509'@'%' IDENTIFIED BY 'cdc_x509';
CREATE USER IF NOT EXISTS 'cdc_x509'@'localhost' IDENTIFIED BY 'cdc_x509';
ALTER USER 'cdc_x509'@'%' REQUIRE X509;
ALTER USER 'cdc_x509'@'localhost' REQUIRE X509;
GRANT ALL PRIVILEGES ON *.* TO 'cdc_x509'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'cdc_x509'@'localhost';

FLUSH PRIVILEGES;
