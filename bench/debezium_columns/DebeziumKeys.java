// Prints every key a Debezium connector declares (its config()): name, type, default, group; one per line,
// tab-separated. bench/debezium_columns.py --keys writes them to tests/fixtures/mysql/.
import org.apache.kafka.common.config.ConfigDef;

public class DebeziumKeys {
    public static void main(String[] args) throws Exception {
        Object connector = Class.forName(args[0]).getDeclaredConstructor().newInstance();
        ConfigDef def = (ConfigDef) connector.getClass().getMethod("config").invoke(connector);
        for (ConfigDef.ConfigKey k : def.configKeys().values()) {
            String dflt = k.hasDefault() ? String.valueOf(k.defaultValue) : "(required)";
            System.out.println(k.name + "\t" + k.type + "\t" + dflt + "\t" + k.group);
        }
    }
}
