package io.spillway.app.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Reading an HTTP/1.1 request head off a raw socket, for the small fake upstreams of the tests. */
public final class RequestHeads {
  private RequestHeads() {}

  /** The head up to and including its blank line, or null when the peer closed before it ended. */
  public static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    return head.toString(StandardCharsets.US_ASCII);
  }

  /** {@link #readHead}, failing when the peer closed before the head ended. */
  public static String requireHead(InputStream in) throws IOException {
    String head = readHead(in);
    if (head == null) {
      throw new IOException("closed before the request head ended");
    }
    return head;
  }

  /** The head's {@code Content-Length}, or 0 without one. */
  public static int contentLength(String head) {
    for (String line : head.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        return Integer.parseInt(line.substring(15).trim());
      }
    }
    return 0;
  }
}
