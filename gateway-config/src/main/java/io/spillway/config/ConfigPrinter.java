package io.spillway.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Set;

/** Renders the effective config as YAML with every secret masked. */
public final class ConfigPrinter {
  private static final Set<String> SECRET_FIELDS = Set.of("apiKey", "token", "key", "password", "keyIdSalt");
  private static final String MASK = "****";
  /** How a secret that resolved to nothing is shown: never as the mask, which would hide that it is missing. */
  static final String EMPTY = "(empty)";

  private ConfigPrinter() {}

  public static String toMaskedYaml(GatewayConfig config) {
    ObjectNode tree = MAPPER.valueToTree(config);
    mask(tree);
    oneFormOfLocalServers(tree);
    try {
      return MAPPER.writeValueAsString(tree);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The effective config as a JSON tree with secrets masked (for the admin API). */
  public static JsonNode toMaskedTree(GatewayConfig config) {
    ObjectNode tree = MAPPER.valueToTree(config);
    mask(tree);
    oneFormOfLocalServers(tree);
    return tree;
  }

  /**
   * The local servers as they can be read back: {@code local.servers} without {@code local.baseUrl}
   * (which only mirrors the first server), or the one-server shorthand without an empty list.
   */
  private static void oneFormOfLocalServers(ObjectNode tree) {
    if (tree.get("local") instanceof ObjectNode local) {
      if (local.path("servers").isEmpty()) {
        local.remove("servers");
      } else {
        local.remove("baseUrl");
      }
    }
  }

  private static void mask(JsonNode node) {
    if (node instanceof ObjectNode object) {
      object.properties().forEach(field -> {
        if (SECRET_FIELDS.contains(field.getKey()) && (field.getValue().isTextual() || field.getValue().isNull() && !object.path("keyHash").isTextual())) {
          boolean empty = field.getValue().isNull() || field.getValue().textValue().isBlank();
          object.put(field.getKey(), empty ? EMPTY : MASK);
        } else if (field.getKey().equals("store") && field.getValue().isTextual()) {
          object.put("store", field.getValue().textValue().replaceAll("//[^@/]*@", "//" + MASK + "@"));
        } else {
          mask(field.getValue());
        }
      });
    } else if (node instanceof ArrayNode array) {
      array.forEach(ConfigPrinter::mask);
    }
  }

  private static final ObjectMapper MAPPER = mapper();

  private static ObjectMapper mapper() {
    SimpleModule module = new SimpleModule("spillway-config-out");
    Choice.register(module);
    module.addSerializer(Duration.class, new JsonSerializer<>() {
      @Override
      public void serialize(Duration value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeString(Durations.format(value));
      }
    });
    module.addSerializer(DataSize.class, new JsonSerializer<>() {
      @Override
      public void serialize(DataSize value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeString(value.toString());
      }
    });
    module.addSerializer(Store.class, new JsonSerializer<>() {
      @Override
      public void serialize(Store value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeString(value.spelling());
      }
    });
    module.addKeySerializer(Tier.class, new JsonSerializer<Tier>() {
      @Override
      public void serialize(Tier value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeFieldName(value.tag());
      }
    });
    module.addSerializer(Tier.class, new JsonSerializer<Tier>() {
      @Override
      public void serialize(Tier value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeString(value.tag());
      }
    });
    return YAMLMapper.builder()
        .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
        .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
        .build()
        .registerModule(module);
  }
}
