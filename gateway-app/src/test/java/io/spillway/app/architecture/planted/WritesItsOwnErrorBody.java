package io.spillway.app.architecture.planted;

import io.spillway.core.error.OpenAiError;

/** Planted for ArchitectureRulesTest: writes an OpenAI error body itself instead of through the error mapper. */
public final class WritesItsOwnErrorBody {
  private WritesItsOwnErrorBody() {}

  public static byte[] body(String message) {
    return new OpenAiError(message, "server_error", null, null).toBytes();
  }
}
