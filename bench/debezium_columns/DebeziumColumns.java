// Runs Debezium's own column mappers (column.mask.*, column.truncate.*, *.propagate.source.type) and its
// TinyIntOneToBooleanConverter on cases read from stdin; bench/debezium_columns.py drives it and compares
// cdc's results. One case per line, tab-separated:
//   kind (mapper|converter), config (k=v;k=v), table (db.table), column name, type name, jdbc type,
//   length (-1: none), scale (-1: none), optional (true|false), value (\N: null)
// One answer per line: value (\N: null), schema type, schema parameters (k=v;k=v, sorted).
import io.debezium.config.Configuration;
import io.debezium.connector.mariadb.MariaDbConnectorConfig;
import io.debezium.relational.Column;
import io.debezium.relational.ColumnEditor;
import io.debezium.relational.TableId;
import io.debezium.relational.ValueConverter;
import io.debezium.relational.mapping.ColumnMapper;
import io.debezium.relational.mapping.ColumnMappers;
import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;

public class DebeziumColumns {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            Properties props = new Properties();
            for (String kv : f[1].split(";")) {
                int eq = kv.indexOf('=');
                if (eq > 0) props.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
            }
            String[] table = f[2].split("\\.");
            TableId id = new TableId(table[0], null, table[1]);
            ColumnEditor editor = Column.editor().name(f[3]).type(f[4]).jdbcType(Integer.parseInt(f[5]))
                .optional(Boolean.parseBoolean(f[8]));
            if (!f[6].equals("-1")) editor.length(Integer.parseInt(f[6]));
            if (!f[7].equals("-1")) editor.scale(Integer.parseInt(f[7]));
            Column column = editor.create();
            String value = f[9].equals("\\N") ? null : f[9];
            if (f[0].equals("mapper")) {
                props.setProperty("topic.prefix", "p");
                props.setProperty("database.hostname", "h");
                MariaDbConnectorConfig config = new MariaDbConnectorConfig(Configuration.from(props));
                ColumnMappers mappers = ColumnMappers.create(config);
                ColumnMapper mapper = mappers.mapperFor(id, column);
                SchemaBuilder builder = SchemaBuilder.string();
                Object out = value;
                if (mapper != null) {
                    ValueConverter converter = mapper.create(column);
                    out = converter == null ? value : converter.convert(value);
                    mapper.alterFieldSchema(column, builder);
                }
                print(out, builder.build());
            } else {
                CustomConverter<SchemaBuilder, RelationalColumn> converter = (CustomConverter<SchemaBuilder, RelationalColumn>)
                    Class.forName(props.getProperty("type")).getDeclaredConstructor().newInstance();
                converter.configure(props);
                Object[] registered = new Object[2];
                converter.converterFor(relational(id, column), (schema, fn) -> { registered[0] = schema; registered[1] = fn; });
                if (registered[0] == null) {
                    System.out.println("\\N\tnone\t");
                } else {
                    Object arg = value == null ? null : Integer.valueOf(value);
                    print(((CustomConverter.Converter) registered[1]).convert(arg), ((SchemaBuilder) registered[0]).build());
                }
            }
        }
    }

    static void print(Object value, Schema schema) {
        TreeMap<String, String> params = new TreeMap<>();
        if (schema.parameters() != null) params.putAll(schema.parameters());
        StringBuilder p = new StringBuilder();
        params.forEach((k, v) -> p.append(p.length() > 0 ? ";" : "").append(k).append('=').append(v));
        System.out.println((value == null ? "\\N" : value.toString()) + "\t" + schema.type() + "\t" + p);
    }

    static RelationalColumn relational(TableId id, Column c) {
        return new RelationalColumn() {
            public String name() { return c.name(); }
            public String dataCollection() { return id.toString(); }
            public int jdbcType() { return c.jdbcType(); }
            public int nativeType() { return c.nativeType(); }
            public String typeName() { return c.typeName(); }
            public String typeExpression() { return c.typeExpression(); }
            public OptionalInt length() { return c.length() < 0 ? OptionalInt.empty() : OptionalInt.of(c.length()); }
            public OptionalInt scale() { return c.scale().isPresent() ? OptionalInt.of(c.scale().get()) : OptionalInt.empty(); }
            public boolean isOptional() { return c.isOptional(); }
            public Object defaultValue() { return null; }
            public boolean hasDefaultValue() { return false; }
        };
    }
}
