package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.common.AttributeKey;
import io.spillway.core.pipeline.Route;
import java.util.ArrayList;
import java.util.List;

/**
 * The span attributes of the OpenTelemetry GenAI semantic conventions that Spillway sets, and
 * Spillway's own. Never a prompt, a completion or a key.
 */
final class GenAi {
  static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
  static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("gen_ai.provider.name");
  static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
  static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
  static final AttributeKey<Long> INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
  static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
  static final AttributeKey<List<String>> FINISH_REASONS =
      AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");

  static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
  static final AttributeKey<String> HTTP_ROUTE = AttributeKey.stringKey("http.route");
  static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
  static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("spillway.request_id");
  static final AttributeKey<String> TIER = AttributeKey.stringKey("spillway.tier");
  static final AttributeKey<String> TEAM = AttributeKey.stringKey("spillway.team");
  static final AttributeKey<String> BACKEND = AttributeKey.stringKey("spillway.backend");
  static final AttributeKey<List<String>> DEGRADED = AttributeKey.stringArrayKey("spillway.degraded");
  static final AttributeKey<String> CACHE = AttributeKey.stringKey("spillway.cache");
  static final AttributeKey<Boolean> CAPACITY = AttributeKey.booleanKey("spillway.capacity");
  static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("spillway.stream");

  private GenAi() {}

  /** The {@code gen_ai.operation.name} of a route, or null for a route that is no model call. */
  static String operation(Route route) {
    return switch (route) {
      case CHAT_COMPLETIONS, RESPONSES, MESSAGES -> "chat";
      case COMPLETIONS -> "text_completion";
      case EMBEDDINGS -> "embeddings";
      case MODELS, MESSAGES_COUNT_TOKENS -> null;
    };
  }

  /** A span name per the conventions: {@code chat gpt-4o}, else the route ({@code GET /v1/models}). */
  static String spanName(Route route, String model) {
    String operation = operation(route);
    if (operation == null) {
      return route.method() + " " + route.path();
    }
    return model == null ? operation : operation + " " + model;
  }

  /** Finish reasons of a whole answer: each choice's {@code finish_reason}, or a response's status. */
  static List<String> finishReasons(JsonNode answer) {
    JsonNode choices = answer.get("choices");
    if (choices != null && choices.isArray()) {
      List<String> reasons = new ArrayList<>();
      for (JsonNode choice : choices) {
        String reason = text(choice, "finish_reason");
        if (reason != null) {
          reasons.add(reason);
        }
      }
      return reasons;
    }
    if ("message".equals(text(answer, "type")) && text(answer, "stop_reason") != null) {
      return List.of(text(answer, "stop_reason")); // Anthropic's Messages API
    }
    JsonNode status = answer.get("status");
    return status != null && status.isTextual() && "response".equals(text(answer, "object"))
        ? List.of(status.asText()) : List.of();
  }

  static String text(JsonNode node, String field) {
    JsonNode value = node == null ? null : node.get(field);
    return value != null && value.isTextual() ? value.asText() : null;
  }
}
