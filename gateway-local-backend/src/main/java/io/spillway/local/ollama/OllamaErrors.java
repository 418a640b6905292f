package io.spillway.local.ollama;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import java.time.Duration;
import java.util.Locale;

/**
 * Ollama's errors ({@code {"error": "…"}} with an HTTP status) as OpenAI errors a client can act on:
 * an unknown model becomes 404 {@code model_not_found} naming {@code ollama pull}, a busy server 503
 * with {@code Retry-After}, a refused request 400, anything else 502.
 */
final class OllamaErrors {
  static final String BUSY_CODE = "local_busy";

  private OllamaErrors() {}

  /**
   * @param message Ollama's {@code error} text, or null when the body had none
   * @param status Ollama's HTTP status; for an error line that came instead of the first streamed
   *     line (the status was already 200), pass 500
   * @param retryAfter the {@code Retry-After} Ollama sent, or null (the client then gets the
   *     gateway's usual one for a 503)
   */
  static GatewayException from(int status, String message, String requested, String localModel, Duration retryAfter) {
    String text = message == null || message.isBlank() ? "HTTP " + status : message;
    String lower = text.toLowerCase(Locale.ROOT);
    if (status == 404 && (lower.contains("model") || lower.contains("not found"))) {
      return modelNotFound(requested, localModel);
    }
    if (status == 404) {
      return ErrorKind.BAD_GATEWAY.exception(
          "The local backend answered 404 for Ollama's API: is local.baseUrl an Ollama server? "
              + "(For an OpenAI-compatible server set local.kind: openai.)").withCode("local_not_ollama");
    }
    if (status == 429 || status == 503 || (status >= 500 && lower.contains("busy"))) {
      return ErrorKind.UNAVAILABLE.exception(
          "The local backend (Ollama) is busy: " + text + ". Retry after the Retry-After interval.")
          .withCode(BUSY_CODE).withRetryAfter(retryAfter);
    }
    if (status == 400) {
      return ErrorKind.INVALID_REQUEST.exception("The local backend (Ollama) refused the request: " + text);
    }
    return ErrorKind.BAD_GATEWAY.exception("The local backend (Ollama) failed: " + text).withCode("local_error");
  }

  /**
   * Whether an Ollama 400 says the model cannot generate at all ({@code "nomic-embed-text" does not
   * support generate}): an embedding-only model.
   */
  static boolean refusesGeneration(String message) {
    return message.toLowerCase(Locale.ROOT).contains("does not support generate");
  }

  static GatewayException modelNotFound(String requested, String localModel) {
    String servedAs = requested != null && !requested.equals(localModel)
        ? " (local.models maps '" + requested + "' to it)" : "";
    return ErrorKind.MODEL_NOT_FOUND.exception(
        "The model '" + localModel + "' is not on the local Ollama server" + servedAs
            + ". Fix: run `ollama pull " + localModel + "` on the Ollama host, or map the model to one it has "
            + "in local.models.", "model");
  }

  /** {@code Retry-After} in whole seconds, or null when absent or not a number. */
  static Duration retryAfter(String header) {
    if (header == null) {
      return null;
    }
    try {
      long seconds = Long.parseLong(header.trim());
      return seconds > 0 ? Duration.ofSeconds(seconds) : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
