package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Translation;
import io.spillway.local.Unsupported;
import java.util.List;

/**
 * OpenAI (legacy) completions ⇄ Ollama {@code /api/generate}: prompt and suffix in, a
 * {@code text_completion} (or its chunks) out. Like Ollama's own {@code /v1/completions}, the prompt
 * goes through the model's template; a batch of several prompts cannot be served locally.
 */
final class CompletionTranslation extends OllamaGeneration {
  CompletionTranslation(ObjectNode body, String keepAlive, Integer numCtx) {
    super("Completions API", body, keepAlive, numCtx);
  }

  @Override
  void write(ObjectNode out, Unsupported unsupported) {
    out.put("prompt", prompt(body.get("prompt"), unsupported));
    params.handled("prompt", "suffix");
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
  @Override
  public ObjectNode answer(JsonNode answer, String localModel, long created) {
    ObjectNode out = Json.object();
    out.put("id", Ids.next("cmpl-"));
    out.put("object", "text_completion");
    out.put("created", created);
    out.put("model", Translation.servedModel(answer, localModel));
    out.put("system_fingerprint", OllamaBackend.FINGERPRINT);
    String text = Json.text(answer, "response");
    out.putArray("choices").add(choice(text == null ? "" : text, ChatTranslation.finishReason(answer, false)));
    out.set("usage", ChatTranslation.usage(answer));
    return out;
  }

  private static ObjectNode choice(String text, String finishReason) {
    ObjectNode choice = Json.object();
    choice.put("text", text);
    choice.put("index", 0);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    return choice;
  }

  @Override
  public StreamTranslator streamTranslator(String localModel, long created) {
    return new Stream(new CompletionChunks("text_completion", "cmpl-", localModel, created, includeUsage()));
  }

  /** {@code /api/generate} NDJSON → {@code text_completion} chunks, finish chunk, optional usage, {@code [DONE]}. */
  private record Stream(CompletionChunks chunks) implements StreamTranslator {
    @Override
    public List<SseEvent> line(JsonNode line) {
      chunks.read(line);
      String text = Json.text(line, "response");
      if (text == null || text.isEmpty()) {
        return List.of();
      }
      return List.of(chunks.chunk(choice(text, null)));
    }

    @Override
    public List<SseEvent> end(JsonNode last) {
      return chunks.end(chunks.chunk(choice("", ChatTranslation.finishReason(last, false))), last);
    }
  }
}
