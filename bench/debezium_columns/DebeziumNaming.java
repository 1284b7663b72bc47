// Debezium's topic naming strategies and name adjusters on the cases bench/debezium_naming.py sends on stdin,
// one per line (tab-separated): "topic <strategy class> <prefix> <delimiter> <heartbeat prefix> <transaction>
// <db> <table>" or "schema|field <avro|avro_unicode> <name>". Prints one answer line per case.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

import io.debezium.relational.TableId;
import io.debezium.schema.FieldNameUnderscoreReplacementFunction;
import io.debezium.schema.FieldNameUnicodeReplacementFunction;
import io.debezium.schema.SchemaNameAdjuster;
import io.debezium.schema.UnicodeReplacementFunction;
import io.debezium.spi.common.ReplacementFunction;
import io.debezium.spi.topic.TopicNamingStrategy;

public class DebeziumNaming {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("topic")) {
                Properties props = new Properties();
                props.put("topic.prefix", f[2]);
                props.put("topic.delimiter", f[3]);
                props.put("topic.heartbeat.prefix", f[4]);
                props.put("topic.transaction", f[5]);
                @SuppressWarnings("unchecked")
                TopicNamingStrategy<TableId> s = (TopicNamingStrategy<TableId>) Class.forName(f[1])
                        .getConstructor(Properties.class).newInstance(props);
                TableId id = new TableId(f[6], null, f[7]);
                out.println(s.dataChangeTopic(id) + "\t" + s.recordSchemaPrefix(id) + "\t" + s.schemaChangeTopic()
                        + "\t" + s.heartbeatTopic() + "\t" + s.transactionTopic());
            }
            else {
                boolean unicode = f[1].equals("avro_unicode");
                ReplacementFunction fn;
                if (f[0].equals("schema")) {
                    fn = unicode ? new UnicodeReplacementFunction() : ReplacementFunction.UNDERSCORE_REPLACEMENT;
                }
                else {
                    fn = unicode ? new FieldNameUnicodeReplacementFunction() : new FieldNameUnderscoreReplacementFunction();
                }
                out.println(SchemaNameAdjuster.validFullname(f[2], fn));
            }
        }
    }
}
