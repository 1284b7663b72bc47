// What Kafka's MirrorMakerConfig makes of an mm2.properties: for the interchange tests of `cdc mirror-maker`
// (tests/integration/test_mirror_maker_java_config.py), run live against the connect-mirror jars of
// bench/jars.py's mirror_libs:  java -cp 'libs/*' bench/mirror/MirrorMakerConfigDump.java mm2.properties...
// Prints, one per line, tab-separated:  file <path>,  names client <key>,  names connector <key>,  pair <source>-><target>,
// worker <source>-><target> <key> <value>,  connector <source>-><target> <Connector> <key> <value>.
// Package-private members (MirrorClientConfig.CLIENT_CONFIG_DEF, MirrorMakerConfig.allConfigNames) are read
// by reflection: this file runs in the unnamed module, so nothing stops it.
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.mirror.MirrorClientConfig;
import org.apache.kafka.connect.mirror.MirrorMaker;
import org.apache.kafka.connect.mirror.MirrorMakerConfig;
import org.apache.kafka.connect.mirror.SourceAndTarget;

public class MirrorMakerConfigDump {
    private static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
    }

    public static void main(String[] args) throws Exception {
        for (String path : args) {
            System.out.println("file\t" + esc(path));
            dump(path);
        }
    }

    private static void dump(String path) throws Exception {
        Map<String, String> props = Utils.propsToStringMap(Utils.loadProps(path));
        MirrorMakerConfig config = new MirrorMakerConfig(props);
        Field field = MirrorClientConfig.class.getDeclaredField("CLIENT_CONFIG_DEF");
        field.setAccessible(true);
        for (String name : new TreeSet<>(((ConfigDef) field.get(null)).names())) {
            System.out.println("names\tclient\t" + name);
        }
        Method all = MirrorMakerConfig.class.getDeclaredMethod("allConfigNames");
        all.setAccessible(true);
        @SuppressWarnings("unchecked")
        Set<String> names = (Set<String>) all.invoke(config);
        for (String name : new TreeSet<>(names)) {
            System.out.println("names\tconnector\t" + name);
        }
        List<SourceAndTarget> pairs = config.clusterPairs();
        for (SourceAndTarget pair : pairs) {
            System.out.println("pair\t" + esc(pair.toString()));
            for (Map.Entry<String, String> e : new TreeMap<>(config.workerConfig(pair)).entrySet()) {
                System.out.println("worker\t" + esc(pair.toString()) + "\t" + esc(e.getKey()) + "\t" + esc(e.getValue()));
            }
            for (Class<?> connector : MirrorMaker.CONNECTOR_CLASSES) {
                Map<String, String> base = config.connectorBaseConfig(pair, connector);
                for (Map.Entry<String, String> e : new TreeMap<>(base).entrySet()) {
                    System.out.println("connector\t" + esc(pair.toString()) + "\t" + connector.getSimpleName() + "\t"
                        + esc(e.getKey()) + "\t" + esc(e.getValue()));
                }
            }
        }
    }
}
