package io.spillway.core.http;

import java.util.Locale;
import java.util.Set;

/**
 * Which client headers may travel upstream, and which upstream headers may travel back. Hop-by-hop
 * headers, credentials, anything that names a host, and the routing headers some proxies honour
 * (original URL, method override) never cross.
 */
public final class ForwardedHeaders {
  private static final Set<String> NOT_FORWARDED_UPSTREAM =
      Set.of(
          "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
          "te", "trailer", "trailers", "transfer-encoding", "upgrade", "http2-settings", "host", "content-length",
          "content-type", "authorization", "api-key", "x-api-key", "cookie", "x-request-id",
          "user-agent", "accept-encoding", "expect", "forwarded", "x-forwarded-for", "x-forwarded-host",
          "x-forwarded-proto", "x-real-ip", "openai-organization", "openai-project", "cache-control",
          "origin", "referer", "via", "x-forwarded-server", "x-forwarded-port", "x-forwarded-prefix",
          "x-host", "x-original-url", "x-rewrite-url", "x-original-host", "x-http-method-override",
          "x-http-method", "x-method-override");

  private static final Set<String> RETURNED_TO_CLIENT =
      Set.of("content-type", "retry-after", "retry-after-ms", "openai-processing-ms", "openai-version",
          "openai-model", "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
          "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-limit",
          "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset");

  private ForwardedHeaders() {}

  /**
   * The header names a message declares hop-by-hop in its {@code Connection} header (RFC 9110
   * 7.6.1): they belong to the client's connection and are never forwarded.
   */
  public static Set<String> connectionTokens(Headers headers) {
    Set<String> tokens = new java.util.HashSet<>();
    for (String value : headers.values("connection")) {
      for (String token : value.split(",")) {
        String name = token.strip().toLowerCase(Locale.ROOT);
        if (!name.isEmpty()) {
          tokens.add(name);
        }
      }
    }
    return tokens;
  }

  /** Whether a client header is passed to the upstream as it is. */
  public static boolean forwardUpstream(String name) {
    String lower = name.toLowerCase(Locale.ROOT);
    return !NOT_FORWARDED_UPSTREAM.contains(lower) && !lower.startsWith("x-spillway-")
        && !lower.startsWith("proxy-");
  }

  /**
   * Whether a client header value can travel upstream byte for byte: visible ASCII, space and tab
   * only. Anything else (obs-text such as Latin-1 letters, control characters) is dropped rather
   * than re-encoded, so no value can be reinterpreted on the way.
   */
  public static boolean forwardableValue(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c != '\t' && (c < 0x20 || c > 0x7e)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a header is W3C trace context ({@code traceparent}, {@code tracestate}): with tracing on,
   * the gateway sends its own in their place.
   */
  public static boolean isTraceContext(String name) {
    return name.equalsIgnoreCase("traceparent") || name.equalsIgnoreCase("tracestate");
  }

  /**
   * The longest {@code tracestate} passed on as the client sent it: the W3C trace-context
   * recommendation asks that at least 512 characters be propagated, and lets a longer one be cut.
   */
  public static final int MAX_TRACESTATE = 512;
  /** The longest {@code traceparent} passed on (version 00 is 55 characters; later ones may add fields). */
  public static final int MAX_TRACEPARENT = 256;

  /**
   * Whether a client's trace-context header is small enough to pass on while the gateway does not
   * trace: a longer one is dropped whole (a {@code tracestate} cut at a list member would need parsing
   * it; dropping it is what W3C allows), so a client cannot make the gateway carry kilobytes of
   * headers upstream.
   */
  public static boolean traceContextWithinBounds(String name, String value) {
    int max = name.equalsIgnoreCase("tracestate") ? MAX_TRACESTATE : MAX_TRACEPARENT;
    return value.length() <= max;
  }

  /** Whether an upstream response header is passed back to the client. */
  public static boolean returnToClient(String name) {
    return RETURNED_TO_CLIENT.contains(name.toLowerCase(Locale.ROOT));
  }
}
