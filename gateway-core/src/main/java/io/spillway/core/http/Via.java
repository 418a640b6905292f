package io.spillway.core.http;

import java.util.Locale;

/**
 * Spillway's mark in the {@code Via} header (RFC 9110 7.6.3): every request it forwards carries
 * {@code 1.1 spillway} after whatever {@code Via} entries the request arrived with, so a gateway that
 * receives its own traffic again can count the Spillway hops and stop a loop.
 *
 * <p>Entries are counted by their received-by name only ({@code spillway}, any protocol version, any
 * comment), across every {@code Via} field line of the request. Stateless and thread-safe.
 */
public final class Via {
  /** The received-by pseudonym every Spillway uses, so that chained gateways count as one kind. */
  public static final String PSEUDONYM = "spillway";
  /** The entry Spillway adds: {@code 1.1 spillway}. */
  public static final String OWN = "1.1 " + PSEUDONYM;

  private Via() {}

  /** How many Spillway entries the request's {@code Via} header carries. */
  public static int spillwayHops(Headers headers) {
    int hops = 0;
    for (String value : headers.values("via")) {
      for (String entry : value.split(",")) {
        if (PSEUDONYM.equals(receivedBy(entry))) {
          hops++;
        }
      }
    }
    return hops;
  }

  /**
   * The {@code Via} value to send upstream for a request that arrived with {@code headers}: the
   * entries it came with (when they are plain visible ASCII), then {@link #OWN}.
   */
  public static String forwarded(Headers headers) {
    StringBuilder via = new StringBuilder();
    for (String value : headers.values("via")) {
      String trimmed = value.strip();
      if (!trimmed.isEmpty() && ForwardedHeaders.forwardableValue(trimmed)) {
        via.append(trimmed).append(", ");
      }
    }
    return via.append(OWN).toString();
  }

  /** The received-by part of one entry ({@code 1.1 spillway (comment)} gives {@code spillway}). */
  private static String receivedBy(String entry) {
    String[] parts = entry.strip().split("[ \t]+", 3);
    return parts.length < 2 ? null : parts[1].toLowerCase(Locale.ROOT);
  }
}
