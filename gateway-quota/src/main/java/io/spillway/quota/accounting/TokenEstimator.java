package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import java.util.Locale;
import java.util.Set;

/**
 * Estimates what a request will cost before it is sent: its prompt counted with the model's real
 * tokenizer (o200k_base for the GPT-4o/4.1/5 and o-series families, cl100k_base for everything
 * else, local models included), plus the most it may generate ({@code max_completion_tokens},
 * {@code max_tokens} or {@code max_output_tokens}, else {@code quota.defaultMaxTokens}), times
 * {@code n} choices.
 *
 * <p>The prompt is every piece of text the model reads: message contents (strings or text parts),
 * names, tool-call arguments, tool definitions, {@code instructions}, {@code input} items. Binary
 * parts (images, audio, files) are not counted; the settlement with the backend's reported usage
 * corrects the estimate afterwards. Special-token text is counted as ordinary text. Thread-safe.
 */
public final class TokenEstimator {
  /** Tokens OpenAI's chat format adds around every message, and to prime the reply. */
  private static final int PER_MESSAGE = 3;
  private static final int REPLY_PRIMER = 3;
  private static final Set<String> BINARY_KEYS =
      Set.of("image_url", "input_audio", "audio", "file", "file_data", "file_id", "image", "data", "url");
  private static final Set<String> NON_TEXT_KEYS = Set.of("type", "role", "id", "call_id", "status", "detail");

  /** Vocabularies are large and immutable: each is loaded once per process, on first use. */
  private static final class O200k {
    static final Encoding ENCODING = load(EncodingType.O200K_BASE);
  }

  private static final class Cl100k {
    static final Encoding ENCODING = load(EncodingType.CL100K_BASE);
  }

  private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

  private static synchronized Encoding load(EncodingType type) {
    return REGISTRY.getEncoding(type);
  }

  private final int defaultMaxTokens;

  public TokenEstimator(int defaultMaxTokens) {
    this.defaultMaxTokens = defaultMaxTokens;
  }

  /** A request's estimate. */
  public record Estimate(long promptTokens, long maxOutputTokens) {
    public long total() {
      return promptTokens + maxOutputTokens;
    }
  }

  public Estimate estimate(GatewayRequest request) {
    ObjectNode body = request.body();
    Encoding encoding = encodingFor(request.model());
    long prompt;
    long maxOutput;
    long choices = Math.max(1, positive(body.get("n"), 1));
    switch (request.route()) {
      case CHAT_COMPLETIONS -> {
        prompt = chatPrompt(encoding, body);
        maxOutput = positive(body.get("max_completion_tokens"), positive(body.get("max_tokens"), defaultMaxTokens));
      }
      case COMPLETIONS -> {
        prompt = text(encoding, body.get("prompt")) + text(encoding, body.get("suffix"));
        maxOutput = positive(body.get("max_tokens"), defaultMaxTokens);
      }
      case RESPONSES -> {
        prompt = text(encoding, body.get("instructions")) + text(encoding, body.get("input"))
            + tools(encoding, body.get("tools"));
        maxOutput = positive(body.get("max_output_tokens"), defaultMaxTokens);
        choices = 1;
      }
      default -> {
        prompt = 0;
        maxOutput = 0;
      }
    }
    return new Estimate(prompt, maxOutput * choices);
  }

  private long chatPrompt(Encoding encoding, ObjectNode body) {
    long tokens = REPLY_PRIMER;
    JsonNode messages = body.get("messages");
    if (messages != null && messages.isArray()) {
      for (JsonNode message : messages) {
        tokens += PER_MESSAGE + text(encoding, message);
      }
    }
    return tokens + tools(encoding, body.get("tools")) + tools(encoding, body.get("functions"))
        + tools(encoding, body.get("response_format"));
  }

  private long tools(Encoding encoding, JsonNode definitions) {
    if (definitions == null || definitions.isNull() || definitions.isMissingNode()) {
      return 0;
    }
    return encoding.countTokensOrdinary(Json.toString(definitions));
  }

  /** Tokens of every text leaf under {@code node}, skipping binary payloads and structural fields. */
  private long text(Encoding encoding, JsonNode node) {
    if (node == null || node.isNull()) {
      return 0;
    }
    if (node.isTextual()) {
      return encoding.countTokensOrdinary(node.textValue());
    }
    if (node.isNumber()) {
      return 1; // a token id in a pre-tokenized prompt
    }
    long tokens = 0;
    if (node.isArray()) {
      for (JsonNode item : node) {
        tokens += text(encoding, item);
      }
    } else if (node.isObject()) {
      for (var field : node.properties()) {
        String key = field.getKey();
        if (!BINARY_KEYS.contains(key) && !NON_TEXT_KEYS.contains(key)) {
          tokens += text(encoding, field.getValue());
        }
      }
    }
    return tokens;
  }

  /** Tokens of {@code text} with the tokenizer of {@code model}. */
  public long count(String model, String text) {
    return encodingFor(model).countTokensOrdinary(text);
  }

  Encoding encodingFor(String model) {
    if (model == null) {
      return O200k.ENCODING;
    }
    String m = model.toLowerCase(Locale.ROOT);
    int slash = m.lastIndexOf('/');
    if (slash >= 0) {
      m = m.substring(slash + 1);
    }
    if (m.startsWith("gpt-4o") || m.startsWith("chatgpt-4o") || m.startsWith("gpt-4.1") || m.startsWith("gpt-4.5")
        || m.startsWith("gpt-5") || m.startsWith("o1") || m.startsWith("o3") || m.startsWith("o4")
        || m.startsWith("gpt-oss") || m.startsWith("codex")) {
      return O200k.ENCODING;
    }
    return Cl100k.ENCODING;
  }

  private static long positive(JsonNode value, long otherwise) {
    if (value != null && value.canConvertToLong() && value.asLong() > 0) {
      return value.asLong();
    }
    return otherwise;
  }

  public int defaultMaxTokens() {
    return defaultMaxTokens;
  }
}
