"""Schema history: the relational model, DDL applied to it, and Debezium's history records and stores."""
