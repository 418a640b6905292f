package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;

/**
 * OpenAI (legacy) completions ⇄ Ollama {@code /api/generate}: prompt and suffix in, a
 * {@code text_completion} (or its chunks) out. Like Ollama's own {@code /v1/completions}, the prompt
 * goes through the model's template; a batch of several prompts cannot be served locally.
 */
final class CompletionTranslation {
  private CompletionTranslation() {}

  static ObjectNode request(
      ObjectNode body, String model, Parameters params, Unsupported unsupported, String keepAlive) {
    ObjectNode out = Json.object();
    out.put("model", model);
    out.put("prompt", prompt(body.get("prompt"), unsupported));
    params.handled("model", "prompt", "stream", "suffix");
    JsonNode suffix = body.get("suffix");
    if (suffix != null && suffix.isTextual() && !suffix.textValue().isEmpty()) {
      out.put("suffix", suffix.textValue());
    }
    params.sampling(true).maxTokens("max_tokens").n();
    params.handled("logprobs", "echo", "best_of");
    JsonNode logprobs = body.get("logprobs");
    if (Parameters.present(logprobs) && !(logprobs.isIntegralNumber() && logprobs.intValue() == 0)) {
      params.drop("logprobs");
    }
    JsonNode echo = body.get("echo");
    if (echo != null && echo.asBoolean(false)) {
      params.drop("echo");
    }
    JsonNode bestOf = body.get("best_of");
    if (Parameters.present(bestOf) && bestOf.asInt(1) != 1) {
      params.drop("best_of");
    }
    ChatTranslation.finish(out, params, body, keepAlive);
    return out;
  }

  private static String prompt(JsonNode prompt, Unsupported unsupported) {
    if (prompt == null || prompt.isNull()) {
      return "";
    }
    if (prompt.isTextual()) {
      return prompt.textValue();
    }
    if (prompt.isArray()) {
      if (prompt.isEmpty()) {
        return "";
      }
      if (prompt.size() == 1 && prompt.get(0).isTextual()) {
        return prompt.get(0).textValue();
      }
      if (prompt.get(0).isTextual()) {
        unsupported.add("a batch of several prompts", "prompt");
      } else {
        unsupported.add("prompts given as token ids", "prompt");
      }
      return "";
    }
    throw GatewayException.invalid("'prompt' must be a string or an array", "prompt");
  }

  /** A whole {@code /api/generate} answer as a {@code text_completion}. */
  static ObjectNode completion(JsonNode answer, String model, long created) {
    ObjectNode out = head(Ids.next("cmpl-"), model, created);
    ObjectNode choice = out.putArray("choices").addObject();
    String text = Json.text(answer, "response");
    choice.put("text", text == null ? "" : text);
    choice.put("index", 0);
    choice.putNull("logprobs");
    choice.put("finish_reason", ChatTranslation.finishReason(answer, false));
    out.set("usage", ChatTranslation.usage(answer));
    return out;
  }

  private static ObjectNode head(String id, String model, long created) {
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("object", "text_completion");
    out.put("created", created);
    out.put("model", model);
    out.put("system_fingerprint", OllamaBackend.FINGERPRINT);
    return out;
  }

  /** {@code /api/generate} NDJSON → {@code text_completion} chunks, finish chunk, optional usage, {@code [DONE]}. */
  static final class Stream implements StreamTranslator {
    private final String id = Ids.next("cmpl-");
    private final long created;
    private final boolean includeUsage;
    private String model;
    private boolean first = true;

    Stream(String model, long created, boolean includeUsage) {
      this.model = model;
      this.created = created;
      this.includeUsage = includeUsage;
    }

    @Override
    public List<SseEvent> line(JsonNode line) {
      if (first) {
        String served = Json.text(line, "model");
        if (served != null) {
          model = served;
        }
        first = false;
      }
      String text = Json.text(line, "response");
      if (text == null || text.isEmpty()) {
        return List.of();
      }
      return List.of(chunk(text, null));
    }

    @Override
    public List<SseEvent> done(JsonNode last) {
      List<SseEvent> events = new ArrayList<>(3);
      events.add(chunk("", ChatTranslation.finishReason(last, false)));
      if (includeUsage) {
        ObjectNode usage = head(id, model, created);
        usage.putArray("choices");
        usage.set("usage", ChatTranslation.usage(last));
        events.add(SseEvent.data(Json.toString(usage)));
      }
      events.add(SseEvent.DONE);
      return events;
    }

    private SseEvent chunk(String text, String finishReason) {
      ObjectNode chunk = head(id, model, created);
      ObjectNode choice = chunk.putArray("choices").addObject();
      choice.put("text", text);
      choice.put("index", 0);
      choice.putNull("logprobs");
      choice.put("finish_reason", finishReason);
      if (includeUsage) {
        chunk.putNull("usage");
      }
      return SseEvent.data(Json.toString(chunk));
    }
  }
}
