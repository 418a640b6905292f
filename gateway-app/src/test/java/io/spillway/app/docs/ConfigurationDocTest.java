package io.spillway.app.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.deploy.RepositoryFiles;
import io.spillway.config.DataSize;
import io.spillway.config.GatewayConfig;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/configuration.md} documents every key of the config model, so the two cannot drift:
 * the keys are found by walking {@link GatewayConfig}'s record components, and the document's table
 * rows name them as {@code section.key} ({@code keys[].team} for lists, {@code <team>} or
 * {@code <tier>} for map entries and per-tier sections; a per-tier section is a {@code Map<Tier, ...>}).
 */
class ConfigurationDocTest {
  private static final Pattern ROW = Pattern.compile("(?m)^\\|\\s*`([^`]+)`\\s*\\|");
  private static final Set<String> TIERS = tierNames();
  /** Maps whose entries are not named by the singular of the map ({@code spend.prices.<model>}). */
  private static final Map<String, String> MAP_ENTRY_NAMES = Map.of("prices", "model");

  private static Set<String> tierNames() {
    Set<String> names = new LinkedHashSet<>();
    for (Tier tier : Tier.values()) {
      names.add(tier.name().toLowerCase(Locale.ROOT));
    }
    return names;
  }

  /** Every leaf key, each as the list of spellings the document may use for it. */
  static List<List<String>> keys(Class<?> record, String prefix) {
    List<List<String>> keys = new ArrayList<>();
    for (RecordComponent component : record.getRecordComponents()) {
      String path = prefix + component.getName();
      Class<?> type = component.getType();
      Type generic = component.getGenericType();
      if (isSection(type)) {
        keys.addAll(keys(type, path + "."));
      } else if (List.class.isAssignableFrom(type) && isSection(argument(generic, 0))
          && argument(generic, 0).getSimpleName().endsWith("Config")) {
        keys.addAll(keys(argument(generic, 0), path + "[]."));
      } else if (Map.class.isAssignableFrom(type) && argument(generic, 0) == Tier.class) {
        for (String tier : TIERS) { // a per-tier section: every tier is a key of its own
          if (isSection(argument(generic, 1))) {
            keys.addAll(keys(argument(generic, 1), path + "." + tier + "."));
          } else {
            keys.add(List.of(path + "." + tier));
          }
        }
      } else if (Map.class.isAssignableFrom(type) && isSection(argument(generic, 1))) {
        String entry = MAP_ENTRY_NAMES.getOrDefault(component.getName(), component.getName().endsWith("s")
            ? component.getName().substring(0, component.getName().length() - 1) : component.getName());
        keys.addAll(keys(argument(generic, 1), path + ".<" + entry + ">."));
      } else {
        keys.add(List.of(path));
      }
    }
    List<List<String>> spelled = new ArrayList<>();
    for (List<String> key : keys) {
      Set<String> spellings = new LinkedHashSet<>(key);
      for (String spelling : key) {
        for (String tier : TIERS) {
          spellings.add(spelling.replace("." + tier + ".", ".<tier>."));
          if (spelling.endsWith("." + tier)) {
            spellings.add(spelling.substring(0, spelling.length() - tier.length()) + "<tier>");
          }
        }
      }
      spelled.add(List.copyOf(spellings));
    }
    return spelled;
  }

  /**
   * A record of keys from the config model; a value type such as {@code DataSize} is one key, and so
   * is a list of small rule records (such as {@code shaping.models}) documented as one table row.
   */
  private static boolean isSection(Class<?> type) {
    return type.isRecord() && type.getPackageName().equals(GatewayConfig.class.getPackageName())
        && type != DataSize.class;
  }

  private static Class<?> argument(Type type, int index) {
    Type argument = ((ParameterizedType) type).getActualTypeArguments()[index];
    return argument instanceof Class<?> c ? c : Object.class;
  }

  static Set<String> documentedKeys() throws IOException {
    String doc = Files.readString(RepositoryFiles.root().resolve("docs/configuration.md"));
    Set<String> rows = new LinkedHashSet<>();
    Matcher m = ROW.matcher(doc);
    while (m.find()) {
      rows.add(m.group(1));
    }
    return rows;
  }

  @Test
  void everyConfigKeyIsDocumented() throws IOException {
    Set<String> documented = documentedKeys();
    List<String> missing = new ArrayList<>();
    for (List<String> key : keys(GatewayConfig.class, "")) {
      if (key.stream().noneMatch(documented::contains)) {
        missing.add(key.get(key.size() - 1));
      }
    }
    assertThat(missing).as("keys of the config model missing from docs/configuration.md").isEmpty();
  }

  @Test
  void everyDocumentedKeyExists() throws IOException {
    Set<String> known = new LinkedHashSet<>();
    for (List<String> key : keys(GatewayConfig.class, "")) {
      for (String spelling : key) {
        known.add(spelling);
        for (int dot = spelling.indexOf('.'); dot > 0; dot = spelling.indexOf('.', dot + 1)) {
          known.add(spelling.substring(0, dot));
        }
      }
    }
    assertThat(documentedKeys()).as("rows of docs/configuration.md that name no config key").isSubsetOf(known);
  }

  @Test
  void theWalkFindsNestedListAndMapKeys() {
    List<String> all = keys(GatewayConfig.class, "").stream().flatMap(List::stream).toList();
    assertThat(all).contains("server.tls.certFile", "keys[].keyHash", "quota.tiers.<tier>.share",
        "quota.teams.<team>.requestsPerMinute", "quota.admission.queueSize", "local.models.<model>.contextTokens", "store");
  }
}
