package io.spillway.config;

import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleDeserializers;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A config value that is one of a few words ({@code kind: openai}): an enum whose constants are the
 * words in upper case ({@code SINGLE_LINE} is written {@code single-line}). Parsing is
 * case-sensitive, and an unknown word is reported with the allowed ones; {@link #register} teaches
 * a Jackson module both directions for every such enum.
 */
public interface Choice {
  /** The enum constant's name (every enum has it). */
  String name();

  /** How the value is written in YAML: the constant's name in lower case, {@code _} as {@code -}. */
  @JsonValue
  default String spelling() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * The constant spelled {@code value}; null for null. An unknown word is a problem of the key being
   * bound (a list element reports it on the list) and gives null, so the record takes its default.
   */
  static <E extends Enum<E> & Choice> E parse(Class<E> type, String value) {
    if (value == null) {
      return null;
    }
    for (E constant : type.getEnumConstants()) {
      if (constant.spelling().equals(value)) {
        return constant;
      }
    }
    ConfigProblems.Reporter at = ConfigProblems.at(type.getSimpleName());
    String key = at.path("").replaceFirst("\\[\\d+]$", "");
    at.raw("key '" + key + "': '" + value + "' is not one of " + spellings(type) + Suggestions.didYouMean(value,
        Arrays.stream(type.getEnumConstants()).map(Choice::spelling).toList(), "; "));
    return null;
  }

  /** The allowed spellings, comma-separated, in declaration order. */
  static <E extends Enum<E> & Choice> String spellings(Class<E> type) {
    return Arrays.stream(type.getEnumConstants()).map(Choice::spelling).collect(Collectors.joining(", "));
  }

  /**
   * Reads every {@code Choice} enum by its spelling (through {@link #parse}, so an unknown word is a
   * reported problem) and writes it the same way. Call before the module's other deserializers are added.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static void register(SimpleModule module) {
    module.setDeserializers(new SimpleDeserializers() {
      @Override
      public JsonDeserializer<?> findEnumDeserializer(Class<?> type, DeserializationConfig config,
          BeanDescription description) throws JsonMappingException {
        if (!Choice.class.isAssignableFrom(type)) {
          return super.findEnumDeserializer(type, config, description);
        }
        return new JsonDeserializer<Object>() {
          @Override
          public Object deserialize(JsonParser p, DeserializationContext context) throws IOException {
            return parse((Class) type, p.getValueAsString());
          }
        };
      }
    });
    module.addSerializer(Choice.class, new JsonSerializer<>() {
      @Override
      public void serialize(Choice value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
        gen.writeString(value.spelling());
      }
    });
  }
}
