"""MySQL/MariaDB DDL applied to the relational model of :mod:`cdc.history.model`.

A hand-written tokenizer and recursive-descent parser for the statements that change tables (Debezium's
``MySqlAntlrDdlParser`` is the reference): it lives with the MySQL connector because its grammar and its
type facts are MySQL's; the schema history only needs an object with ``apply``.
"""

from cdc.mysql.ddl.parser import DdlParser

__all__ = ["DdlParser"]
