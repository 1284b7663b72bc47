// What Debezium's MySQL DDL parser keeps of COMMENT clauses, with include.schema.comments on (first argument
// "true") or off: reads DDL statements from stdin (one per line, run in database "db"), prints each table's
// comment and each column's, tab-separated, one line per table ("\N" for none).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import io.debezium.connector.binlog.charset.BinlogCharsetRegistry;
import io.debezium.connector.mysql.antlr.MySqlAntlrDdlParser;
import io.debezium.connector.mysql.charset.MySqlCharsetRegistry;
import io.debezium.relational.Column;
import io.debezium.relational.Table;
import io.debezium.relational.TableId;
import io.debezium.relational.Tables;

public class DebeziumComments {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        boolean include = Boolean.parseBoolean(args[0]);
        BinlogCharsetRegistry registry = new MySqlCharsetRegistry();
        String line;
        while ((line = in.readLine()) != null) {
            MySqlAntlrDdlParser parser = new MySqlAntlrDdlParser(true, false, include, null, registry);
            parser.setCurrentSchema("db");
            Tables tables = new Tables();
            parser.parse(line, tables);
            StringBuilder sb = new StringBuilder();
            for (TableId id : tables.tableIds()) {
                Table t = tables.forTable(id);
                sb.append(t.comment() == null ? "\\N" : t.comment());
                for (Column c : t.columns()) {
                    sb.append("\t").append(c.name()).append("=").append(c.comment() == null ? "\\N" : c.comment());
                }
            }
            out.println(sb);
        }
    }
}
