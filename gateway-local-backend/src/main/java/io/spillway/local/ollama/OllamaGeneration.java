package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.local.Translation;
import io.spillway.local.Unsupported;
import java.util.List;

/**
 * What every translation to an Ollama generation ({@code /api/chat}, {@code /api/generate}) shares:
 * the body starts with the model and ends with the stream flag, {@code format}, {@code options}
 * (sampling mapped by {@link Parameters}, plus {@code num_ctx} as the context fitting sized it) and
 * {@code keep_alive}; the route writes what lies between. One instance per request.
 */
abstract class OllamaGeneration implements Translation {
  protected final ObjectNode body;
  protected final Parameters params;
  private final String api;
  private final String keepAlive;
  private final Integer numCtx;

  /**
   * @param api the API the client called, as a refusal names it
   * @param keepAlive Ollama's {@code keep_alive} ({@code local.keepAlive})
   * @param numCtx the context size to ask for, or null to leave it to Ollama
   */
  OllamaGeneration(String api, ObjectNode body, String keepAlive, Integer numCtx) {
    this.api = api;
    this.body = body;
    this.params = new Parameters(body).handled("model", "stream");
    this.keepAlive = keepAlive;
    this.numCtx = numCtx;
  }

  /** Writes the route's own fields, after {@code model}; maps parameters through {@link #params}. */
  abstract void write(ObjectNode out, Unsupported unsupported);

  @Override
  public final String api() {
    return api;
  }

  @Override
  public final ObjectNode request(String localModel, Unsupported unsupported) {
    ObjectNode out = Json.object();
    out.put("model", localModel);
    write(out, unsupported);
    out.put("stream", stream());
    if (params.format() != null) {
      out.set("format", params.format());
    }
    if (!params.options().isEmpty()) {
      out.set("options", params.options());
    }
    out.put("keep_alive", keepAlive);
    if (numCtx != null) {
      out.withObjectProperty("options").put("num_ctx", numCtx);
    }
    return out;
  }

  @Override
  public List<String> dropped() {
    return params.dropped();
  }

  @Override
  public boolean stream() {
    return body.path("stream").asBoolean(false);
  }

  /** Whether the client asked for a usage chunk at the end of a chat or completions stream. */
  boolean includeUsage() {
    return body.path("stream_options").path("include_usage").asBoolean(false);
  }
}
