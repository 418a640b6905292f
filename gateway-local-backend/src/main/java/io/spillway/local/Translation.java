package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One request's translation between the OpenAI API a client called and the API of a local server,
 * the one shape every local route has: the request the server takes, what the request asked for
 * that the server cannot honour, and the server's answer made the client's, whole or streamed
 * ({@link StreamTranslator}, ended and failed by {@link TranslatedStream}).
 *
 * <p>What a server cannot serve at all goes to {@link Unsupported} (the request is refused as a
 * whole, by the caller, naming {@link #api()}); what it can leave out goes to {@link #dropped()}
 * (reported by {@link TranslatedRequest}). Each kind of server maps its own error statuses. One
 * instance per request; not thread-safe.
 */
public interface Translation {
  /** The API the client called, as a refusal names it ({@code "Chat Completions API"}). */
  String api();

  /** The body to send to the local server for {@code localModel}; parts it cannot serve go to {@code unsupported}. */
  ObjectNode request(String localModel, Unsupported unsupported);

  /**
   * The request fields left out because the server cannot honour them, in the order found; read
   * after {@link #request}. The default leaves nothing out.
   */
  default List<String> dropped() {
    return List.of();
  }

  /** Whether the client asked for a stream. The default is for APIs that never stream. */
  default boolean stream() {
    return false;
  }

  /** The server's whole answer as the client's; the answer names the model that served it, else {@code localModel}. */
  ObjectNode answer(JsonNode answer, String localModel, long created);

  /** The translator of a streamed answer. Translations whose API never streams keep this default, which refuses. */
  default StreamTranslator streamTranslator(String localModel, long created) {
    throw new IllegalStateException("the " + api() + " is never streamed");
  }

  /** The model an answer names, or {@code fallback} when it names none. */
  static String servedModel(JsonNode answer, String fallback) {
    String served = answer == null ? null : answer.path("model").textValue();
    return served != null && !served.isEmpty() ? served : fallback;
  }
}
