package io.spillway.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One entry of {@code local.models}: the local model that serves a requested one, and optionally its
 * context window. Written in YAML either as the model's name alone ({@code gpt-4o-mini: llama3.2:3b})
 * or as an object ({@code gpt-4o: {model: qwen2.5-coder:32b, contextTokens: 32768}}).
 *
 * @param model the local model's name, as the local server knows it
 * @param contextTokens the model's context window in tokens; null means learn it from the server
 *     (Ollama's {@code /api/show}) or, failing that, assume {@code local.context.defaultTokens}
 */
public record LocalModel(String model, Integer contextTokens) {

  @JsonCreator(mode = JsonCreator.Mode.PROPERTIES)
  public LocalModel {}

  /** The plain form: just the model's name. */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static LocalModel named(String model) {
    return new LocalModel(model, null);
  }

  /** Printed back the way it is written: the plain name unless a window is configured. */
  @JsonValue
  Object written() {
    if (contextTokens == null) {
      return model;
    }
    Map<String, Object> object = new LinkedHashMap<>();
    object.put("model", model);
    object.put("contextTokens", contextTokens);
    return object;
  }
}
