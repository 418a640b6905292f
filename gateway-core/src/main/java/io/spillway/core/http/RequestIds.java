package io.spillway.core.http;

import java.util.concurrent.ThreadLocalRandom;

/** Request ids: the client's own when it is short and safe to echo, else a fresh random one. */
public final class RequestIds {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private RequestIds() {}

  public static String fresh() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    char[] out = new char[28];
    "req_".getChars(0, 4, out, 0);
    long a = random.nextLong();
    long b = random.nextLong();
    for (int i = 0; i < 12; i++) {
      out[4 + i] = HEX[(int) (a >>> (i * 4)) & 0xf];
      out[16 + i] = HEX[(int) (b >>> (i * 4)) & 0xf];
    }
    return new String(out);
  }

  /** The client's id if it is 1-128 characters of letters, digits, and {@code -_.:}; else null. */
  public static String acceptable(String clientId) {
    if (clientId == null || clientId.isEmpty() || clientId.length() > 128) {
      return null;
    }
    for (int i = 0; i < clientId.length(); i++) {
      char c = clientId.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_' || c == '.' || c == ':';
      if (!ok) {
        return null;
      }
    }
    return clientId;
  }
}
