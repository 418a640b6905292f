package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.local.Translation;
import io.spillway.local.Unsupported;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;

/**
 * OpenAI embeddings ⇄ Ollama {@code /api/embed}. In: {@code input} (a string or an array of
 * strings) and {@code dimensions}; Ollama answers {@code embeddings} (one vector per input, in order)
 * and {@code prompt_eval_count}. Out: OpenAI's {@code list} of {@code embedding} objects, as floats
 * or, when the client asked for {@code encoding_format: "base64"}, as base64 of little-endian
 * float32 (what OpenAI sends). Token-id inputs cannot be served locally: Ollama takes text only.
 * Nothing is left out (what Ollama cannot embed is refused), and nothing is streamed.
 */
final class EmbeddingTranslation implements Translation {
  private final ObjectNode body;
  private final String keepAlive;

  /** @param keepAlive Ollama's {@code keep_alive} ({@code local.keepAlive}) */
  EmbeddingTranslation(ObjectNode body, String keepAlive) {
    this.body = body;
    this.keepAlive = keepAlive;
  }

  @Override
  public String api() {
    return "Embeddings API";
  }

  @Override
  public ObjectNode request(String localModel, Unsupported unsupported) {
    ObjectNode out = Json.object();
    out.put("model", localModel);
    JsonNode input = body.get("input");
    if (input != null && input.isTextual()) {
      out.put("input", input.textValue());
    } else if (input != null && input.isArray()) {
      ArrayNode texts = out.putArray("input");
      for (JsonNode item : input) {
        if (item.isTextual()) {
          texts.add(item.textValue());
        } else {
          unsupported.add("token-id input (Ollama embeds text only)", "input");
          break;
        }
      }
    }
    JsonNode dimensions = body.get("dimensions");
    if (dimensions != null && dimensions.isIntegralNumber()) {
      out.put("dimensions", dimensions.intValue());
    }
    String format = Json.text(body, "encoding_format");
    if (format != null && !format.equals("float") && !format.equals("base64")) {
      unsupported.add("encoding_format '" + format + "'", "encoding_format");
    }
    out.put("keep_alive", keepAlive);
    return out;
  }

  @Override
  public ObjectNode answer(JsonNode answer, String localModel, long created) {
    boolean base64 = "base64".equals(Json.text(body, "encoding_format"));
    ObjectNode out = Json.object();
    out.put("object", "list");
    ArrayNode data = out.putArray("data");
    int index = 0;
    for (JsonNode vector : answer.path("embeddings")) {
      ObjectNode item = data.addObject();
      item.put("object", "embedding");
      item.put("index", index++);
      if (base64) {
        item.put("embedding", base64(vector));
      } else {
        ArrayNode floats = item.putArray("embedding");
        vector.forEach(v -> floats.add(v.floatValue()));
      }
    }
    out.put("model", Translation.servedModel(answer, localModel));
    long prompt = answer.path("prompt_eval_count").asLong(0);
    out.putObject("usage").put("prompt_tokens", prompt).put("total_tokens", prompt);
    return out;
  }

  private static String base64(JsonNode vector) {
    ByteBuffer bytes = ByteBuffer.allocate(vector.size() * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    vector.forEach(v -> bytes.putFloat(v.floatValue()));
    return Base64.getEncoder().encodeToString(bytes.array());
  }
}
