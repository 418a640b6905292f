package io.spillway.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a YAML config: {@code ${ENV}} and {@code ${ENV:-default}} are replaced in every scalar,
 * unknown keys are errors, and every error names the file, the key and why.
 */
public final class ConfigLoader {
  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?}");

  /**
   * The keys that hold a secret: an empty value there is a key that lets nobody in or a call made
   * without credentials, so it is refused, or warned about where the file asked for it ({@code ${NAME:-}}).
   */
  private static final Pattern SECRET_KEY =
      Pattern.compile("admin\\.token|cloud\\.apiKey|cloud\\.routes\\[\\d+]\\.apiKey|keys\\[\\d+]\\.key");

  private final Function<String, String> environment;
  private final List<String> warnings = new ArrayList<>();

  public ConfigLoader(Function<String, String> environment) {
    this.environment = environment;
  }

  /**
   * What the last {@link #load}/{@link #parse} allowed but an operator should know: each secret that
   * resolved to nothing through {@code ${NAME:-}}, naming the key, the variable and what follows.
   * A loader is not meant to be shared between threads.
   */
  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  public static ConfigLoader withSystemEnvironment() {
    return new ConfigLoader(System::getenv);
  }

  public GatewayConfig load(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw ConfigException.unreadable(file + ": no such file", e);
    } catch (java.nio.file.AccessDeniedException e) {
      throw ConfigException.unreadable(file + ": cannot read (permission denied)", e);
    } catch (IOException e) {
      throw ConfigException.unreadable(file + ": cannot read (" + e.getMessage() + ")", e);
    }
    return parse(file.toString(), text);
  }

  /**
   * A small config touching the YAML parser's mappings, lists and scalars: binding it builds the
   * binder's deserializers for every config record (Jackson builds them for the whole record tree
   * at the first bind), so that the real load finds them made.
   */
  static final String WARM_UP_SAMPLE = """
      server: { host: 127.0.0.1, port: 0, idleTimeout: 60s, maxRequestSize: 1MiB }
      cloud: { baseUrl: "http://127.0.0.1:1/v1", apiKey: "${SPILLWAY_WARM_UP_KEY:-sk-warm-up}" }
      keys:
        - { key: warm-up-key, team: warm-up, tier: gold }
      """;

  /**
   * Binds a small sample config and forgets it: start-up does this on a second thread while the
   * command line is parsed, so that the class loading and deserializer building of the first bind
   * are done, or half done, by the time the main thread reads the real file. Only timing depends on
   * it; a sample the model rejects still leaves the deserializers built.
   */
  public static void warmUp() {
    try {
      new ConfigLoader(name -> null).parse("(warm-up)", WARM_UP_SAMPLE);
    } catch (ConfigException e) {
      // Only timing depends on the warm-up.
    }
  }

  /** Parses config text; {@code source} names it in error messages. */
  public GatewayConfig parse(String source, String text) {
    warnings.clear();
    JsonNode tree;
    try {
      tree = YAML.readTree(text);
    } catch (JsonProcessingException e) {
      throw new ConfigException(source + ": not valid YAML: " + e.getOriginalMessage()
          + (e.getLocation() != null ? " (line " + e.getLocation().getLineNr() + ")" : ""));
    }
    if (tree == null || tree.isMissingNode() || tree.isNull()) {
      tree = JsonNodeFactory.instance.objectNode();
    }
    if (!tree.isObject()) {
      throw new ConfigException(source + ": the top level must be a mapping of sections");
    }
    JsonNode localSection = tree.path("local");
    if (localSection.has("servers") && localSection.has("baseUrl")) {
      throw new ConfigException(source + ": key 'local.servers': cannot be combined with local.baseUrl (the"
          + " one-server shorthand); list every server under local.servers and remove local.baseUrl");
    }
    JsonNode interpolated = interpolate(source, "", tree);
    ConfigProblems.Bound<GatewayConfig> bound;
    try {
      bound = ConfigProblems.collect(() -> BINDER.treeToValue(interpolated, GatewayConfig.class));
    } catch (JsonMappingException e) {
      throw new ConfigException(source + ": key '" + path(e) + "': " + reason(e));
    } catch (JsonProcessingException e) {
      throw new ConfigException(source + ": " + e.getOriginalMessage());
    } catch (IllegalArgumentException e) {
      throw new ConfigException(source + ": " + e.getMessage());
    }
    if (!bound.problems().isEmpty()) {
      throw new ConfigException(source + ": " + String.join("; ", bound.problems()));
    }
    return bound.value();
  }

  private JsonNode interpolate(String source, String path, JsonNode node) {
    if (node.isObject()) {
      ObjectNode copy = JsonNodeFactory.instance.objectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        String childPath = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
        copy.set(field.getKey(), interpolate(source, childPath, field.getValue()));
      }
      return copy;
    }
    if (node.isArray()) {
      ArrayNode copy = JsonNodeFactory.instance.arrayNode();
      for (int i = 0; i < node.size(); i++) {
        copy.add(interpolate(source, path + "[" + i + "]", node.get(i)));
      }
      return copy;
    }
    if (node.isTextual() && node.textValue().contains("${")) {
      return new TextNode(substitute(source, path, node.textValue()));
    }
    return node;
  }

  private String substitute(String source, String path, String value) {
    Matcher m = VARIABLE.matcher(value);
    StringBuilder out = new StringBuilder();
    List<String> names = new ArrayList<>();
    boolean allowedEmpty = false;
    while (m.find()) {
      String name = m.group(1);
      names.add(name);
      String resolved = environment.apply(name);
      if (resolved == null || (resolved.isEmpty() && m.group(2) != null)) {
        if (m.group(2) == null) {
          throw new ConfigException(source + ": key '" + path + "': environment variable " + name
              + " is not set (export it" + (isSecret(path) ? "" : ", or write ${" + name + ":-} to allow it to be empty")
              + ")");
        }
        resolved = m.group(3);
        allowedEmpty |= resolved.isEmpty();
      }
      m.appendReplacement(out, Matcher.quoteReplacement(resolved));
    }
    m.appendTail(out);
    String result = out.toString();
    if (result.isBlank() && isSecret(path)) {
      String variables = String.join(", ", names);
      if (!allowedEmpty) {
        throw new ConfigException(source + ": key '" + path + "': environment variable " + variables
            + " is set but empty; a secret cannot be empty (export a value)");
      }
      warnings.add(path + ": " + variables + " is empty, so " + consequence(path));
    }
    return result;
  }

  private static boolean isSecret(String path) {
    return SECRET_KEY.matcher(path).matches();
  }

  private static String consequence(String path) {
    if (path.equals("admin.token")) {
      return "the admin API and the dashboard's data are off";
    }
    if (path.startsWith("keys")) {
      return "this key is disabled and admits nobody";
    }
    return "the cloud is called without an API key and will refuse every request";
  }

  private static String path(JsonMappingException e) {
    StringBuilder out = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        if (!out.isEmpty()) {
          out.append('.');
        }
        out.append(ref.getFieldName());
      } else if (ref.getIndex() >= 0) {
        out.append('[').append(ref.getIndex()).append(']');
      }
    }
    return out.toString();
  }

  private static String reason(JsonMappingException e) {
    if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
      String got = e instanceof InvalidFormatException invalid && invalid.getValue() != null
          ? "'" + invalid.getValue() + "'"
          : "something else";
      return "expected " + ValueTypes.inPlainWords(mismatch.getTargetType()) + ", got " + got;
    }
    Throwable cause = e.getCause();
    if (cause instanceof IllegalArgumentException && cause.getMessage() != null) {
      return cause.getMessage();
    }
    String message = e.getOriginalMessage();
    int cut = message.indexOf(" at [Source");
    return cut > 0 ? message.substring(0, cut) : message;
  }

  /**
   * A value that does not parse ({@code localFor: five minutes}) is reported under its key and read
   * as absent, so binding goes on to the other problems.
   */
  private static <T> T reported(JsonParser p, String text, Function<String, T> parse, String expected) {
    if (text == null || p.currentToken() == null || !p.currentToken().isScalarValue()) {
      String key = p.currentToken() == com.fasterxml.jackson.core.JsonToken.START_ARRAY
          ? BindingPaths.pathOf(p).replaceFirst("\\[\\d+]$", "") // the parser is already inside the list
          : BindingPaths.pathOf(p);
      ConfigProblems.at("").raw("key '" + key + "': expected " + expected + ", got a "
          + (p.currentToken() != null && p.currentToken().isStructStart() ? "list or mapping" : "null"));
      skip(p);
      return null;
    }
    try {
      return parse.apply(text);
    } catch (IllegalArgumentException e) {
      ConfigProblems.at("").raw("key '" + BindingPaths.pathOf(p) + "': " + e.getMessage());
      return null;
    }
  }

  private static void skip(JsonParser p) {
    try {
      p.skipChildren();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static final ObjectMapper YAML = new YAMLMapper(new YAMLFactory());

  private static final ObjectMapper BINDER = binder();

  private static ObjectMapper binder() {
    SimpleModule module = new SimpleModule("spillway-config");
    Choice.register(module);
    module.addDeserializer(Duration.class, new JsonDeserializer<>() {
      @Override
      public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        return reported(p, p.getValueAsString(), Durations::parse, "a duration (90s, 5m)");
      }
    });
    module.addDeserializer(DataSize.class, new JsonDeserializer<>() {
      @Override
      public DataSize deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        return reported(p, p.getValueAsString(), DataSize::parse, "a size (512KiB, 8MiB)");
      }
    });
    module.addDeserializer(Store.class, new JsonDeserializer<>() {
      @Override
      public Store deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        return reported(p, p.getValueAsString(), Store::parse, "memory, embedded:<dir> or redis://host:port");
      }
    });
    module.addKeyDeserializer(Tier.class, new TierMaps.Keys());
    module.addDeserializer(Tier.class, new TierMaps.Values());
    module.setDeserializerModifier(new BindingPaths());
    return new ObjectMapper()
        .registerModule(module)
        .addHandler(new UnknownKeys())
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT); // capacityStreak: 2.5 is an error, not 2
  }
}
