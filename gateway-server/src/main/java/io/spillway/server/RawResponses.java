package io.spillway.server;

import io.spillway.core.http.RequestIds;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.OpenAiError;
import io.spillway.core.pipeline.ErrorMapper;
import java.nio.charset.StandardCharsets;

/**
 * Complete HTTP/1.1 error answers as bytes, for handlers that sit below the HTTP codec (connection
 * limit, request read timeout) and close the connection right after writing.
 */
final class RawResponses {
  private RawResponses() {}

  static byte[] closing(ErrorKind kind, String reason, String message, String code, Integer retryAfterSeconds) {
    byte[] body = ErrorMapper.body(new OpenAiError(message, kind.type(), null, code));
    String head = "HTTP/1.1 " + kind.status() + " " + reason + "\r\n"
        + "content-type: application/json\r\n"
        + (retryAfterSeconds != null ? "retry-after: " + retryAfterSeconds + "\r\n" : "")
        + "x-request-id: " + RequestIds.fresh() + "\r\n"
        + "connection: close\r\ncontent-length: " + body.length + "\r\n\r\n";
    byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[headBytes.length + body.length];
    System.arraycopy(headBytes, 0, all, 0, headBytes.length);
    System.arraycopy(body, 0, all, headBytes.length, body.length);
    return all;
  }
}
