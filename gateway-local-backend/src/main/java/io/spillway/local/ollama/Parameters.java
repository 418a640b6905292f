package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Maps OpenAI request parameters to Ollama's {@code options} and {@code format}, and keeps track of
 * what could not be mapped. Every field of the request is either mapped, known to have no effect on
 * the answer (and ignored), or dropped and reported in {@code x-spillway-dropped-params}.
 * One instance per request; not thread-safe.
 */
final class Parameters {
  /** Fields that describe the caller or the platform, not the answer: ignored without a report. */
  private static final Set<String> NO_EFFECT = Set.of(
      "user", "metadata", "store", "service_tier", "safety_identifier", "prompt_cache_key",
      "prompt_cache_retention", "stream_options", "include", "truncation", "background", "max_tool_calls");

  private final ObjectNode body;
  private final ObjectNode options = Json.object();
  private final Set<String> handled = new HashSet<>();
  private final List<String> dropped = new ArrayList<>();
  private JsonNode format;

  Parameters(ObjectNode body) {
    this.body = body;
  }

  /** Marks fields the translator consumed itself. */
  Parameters handled(String... fields) {
    handled.addAll(List.of(fields));
    return this;
  }

  /** Reports {@code field} as dropped (its value cannot be honoured locally). */
  void drop(String field) {
    handled.add(field);
    if (!dropped.contains(field)) {
      dropped.add(field);
    }
  }

  /** {@code temperature}, {@code top_p}, and for chat and completions {@code seed}, penalties, {@code stop}. */
  Parameters sampling(boolean full) {
    number("temperature", "temperature");
    number("top_p", "top_p");
    if (full) {
      number("seed", "seed");
      number("presence_penalty", "presence_penalty");
      number("frequency_penalty", "frequency_penalty");
      stop();
    }
    return this;
  }

  /** The first present of {@code fields} becomes {@code num_predict}. */
  Parameters maxTokens(String... fields) {
    for (String field : fields) {
      handled.add(field);
      JsonNode value = body.get(field);
      if (present(value) && !options.has("num_predict")) {
        options.set("num_predict", value);
      }
    }
    return this;
  }

  /** {@code n}: one answer is all Ollama gives; more is dropped. */
  Parameters n() {
    handled.add("n");
    JsonNode n = body.get("n");
    if (present(n) && n.asInt(1) != 1) {
      dropped.add("n");
    }
    return this;
  }

  /** {@code logprobs}/{@code top_logprobs}: Ollama's native API does not return them here. */
  Parameters logprobs() {
    handled.add("logprobs");
    handled.add("top_logprobs");
    JsonNode logprobs = body.get("logprobs");
    if (present(logprobs) && !(logprobs.isBoolean() && !logprobs.booleanValue())) {
      dropped.add("logprobs");
    }
    if (present(body.get("top_logprobs"))) {
      dropped.add("top_logprobs");
    }
    return this;
  }

  /** Chat's {@code response_format}: {@code json_object} → {@code "json"}, {@code json_schema} → the schema. */
  Parameters responseFormat(JsonNode responseFormat, String field) {
    handled.add(field);
    if (!present(responseFormat)) {
      return this;
    }
    String type = Json.text(responseFormat, "type");
    if (type == null || type.equals("text")) {
      return this;
    }
    switch (type) {
      case "json_object" -> format = Json.MAPPER.getNodeFactory().textNode("json");
      case "json_schema" -> {
        JsonNode holder = responseFormat.has("json_schema") ? responseFormat.get("json_schema") : responseFormat;
        JsonNode schema = holder.get("schema");
        if (schema != null && schema.isObject()) {
          format = schema;
        } else {
          format = Json.MAPPER.getNodeFactory().textNode("json");
        }
      }
      default -> dropped.add(field);
    }
    return this;
  }

  private void number(String field, String option) {
    handled.add(field);
    JsonNode value = body.get(field);
    if (!present(value)) {
      return;
    }
    if (!value.isNumber()) {
      throw GatewayException.invalid("'" + field + "' must be a number", field);
    }
    options.set(option, value);
  }

  private void stop() {
    handled.add("stop");
    JsonNode stop = body.get("stop");
    if (!present(stop)) {
      return;
    }
    ArrayNode out = options.putArray("stop");
    if (stop.isTextual()) {
      out.add(stop.textValue());
    } else if (stop.isArray()) {
      for (JsonNode s : stop) {
        if (!s.isTextual()) {
          throw GatewayException.invalid("'stop' must be a string or an array of strings", "stop");
        }
        out.add(s.textValue());
      }
    } else {
      throw GatewayException.invalid("'stop' must be a string or an array of strings", "stop");
    }
  }

  /** The {@code options} object to send (possibly empty). */
  ObjectNode options() {
    return options;
  }

  /** The {@code format} to send, or null. */
  JsonNode format() {
    return format;
  }

  /** Every field not handled, not ignorable, and not null is dropped; returns all dropped fields in order. */
  List<String> dropped() {
    List<String> out = new ArrayList<>(dropped);
    Iterator<String> names = body.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!handled.contains(name) && !NO_EFFECT.contains(name) && present(body.get(name)) && !out.contains(name)) {
        out.add(name);
      }
    }
    return out;
  }

  static boolean present(JsonNode value) {
    return value != null && !value.isNull() && !value.isMissingNode();
  }
}
