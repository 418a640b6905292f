package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.Version;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.Headers;
import io.spillway.core.http.RequestIds;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/**
 * What the data plane ({@link OllamaBackend}) and the control plane ({@link OllamaControlPlane})
 * say to an Ollama server the same way: the headers every call carries, and how an answer is read
 * (bounded, a JSON object) and an error answer made a {@link GatewayException}. Stateless.
 */
final class OllamaWire {
  static final String NAME = OllamaBackend.NAME;

  private OllamaWire() {}

  /**
   * The headers of a call: a fresh {@code X-Request-ID} each time, the client's id when the call
   * serves a client's request, {@code Via}, and the trace context when traced. No credential is ever sent.
   *
   * @param json whether the call carries a JSON body
   */
  static Headers headers(boolean json, String clientRequestId, String via, Map<String, String> traceContext) {
    Headers.Builder headers = Headers.builder();
    if (json) {
      headers.add("Content-Type", "application/json");
    }
    headers.add("User-Agent", Version.USER_AGENT);
    if (via != null) {
      headers.add("Via", via);
    }
    headers.add("X-Request-ID", RequestIds.fresh());
    if (clientRequestId != null) {
      headers.add("X-Client-Request-ID", clientRequestId);
    }
    if (traceContext != null) {
      traceContext.forEach(headers::add);
    }
    return headers.build();
  }

  /** At most {@code maxBytes} of {@code in}, or {@link #tooLarge()} past that. */
  static byte[] readBounded(InputStream in, long maxBytes) {
    try (in) {
      byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
      if (bytes.length > maxBytes) {
        throw tooLarge();
      }
      return bytes;
    } catch (IOException e) {
      throw UpstreamFailures.midStream(NAME, e);
    }
  }

  static UpstreamException tooLarge() {
    return new UpstreamException(NAME, UpstreamException.Failure.RESPONSE_TOO_LARGE,
        "The " + NAME + " backend's answer is larger than the gateway's limit (cloud.maxResponseSize)", null);
  }

  /** {@code bytes} as a JSON object, or an {@code INVALID_RESPONSE} failure. */
  static JsonNode parse(byte[] bytes) {
    try {
      JsonNode node = Json.parse(bytes);
      if (node != null && node.isObject()) {
        return node;
      }
    } catch (IOException e) {
      // fall through
    }
    throw new UpstreamException(NAME, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + NAME + " backend (Ollama) answered with something that is not a JSON object", null);
  }

  /**
   * An error answer as the client's failure: Ollama's {@code error} text when the body is a JSON
   * object that has one, else the status alone.
   *
   * @param body reads the body (bounded); its failure leaves the status alone to speak
   */
  static GatewayException error(int status, java.util.function.Supplier<byte[]> body, String retryAfterHeader,
      String requested, String localModel) {
    String message = null;
    try {
      message = Json.text(parse(body.get()), "error");
    } catch (UpstreamException e) {
      // Not JSON, or not whole: the status alone has to do.
    }
    return OllamaErrors.from(status, message, requested, localModel, OllamaErrors.retryAfter(retryAfterHeader));
  }
}
