package io.spillway.core.error;

import java.util.List;

/**
 * The local backend cannot serve this request as the client asked for it (a stored conversation it
 * cannot rebuild, a remote image it does not fetch, ...), so it refuses the request as a whole
 * rather than answer something different from what the cloud would.
 *
 * <p>A local backend throws it without any {@code Retry-After}: only the router knows whether and
 * when the cloud may serve the request (it asks the breaker), so the router turns this into the
 * answer the client gets: 503 with the time until the next probe when the cloud may serve it then,
 * 400 without {@code Retry-After} when no backend will (an operator forced all traffic local).
 * Rendered as it is (outside the router), it is a 400 {@code unsupported_on_local}.
 */
public final class UnsupportedOnLocalException extends GatewayException {
  public static final String CODE = "unsupported_on_local";

  private final List<String> parts;
  private final String api;

  /**
   * @param parts what the request asks for that local cannot do, in words a client understands
   *     (e.g. {@code "previous_response_id (the local backend keeps no stored responses)"})
   * @param api the API the request came in on, e.g. {@code "Responses API"}
   * @param param the request field of the first unsupported part, or null
   */
  public UnsupportedOnLocalException(List<String> parts, String api, String param) {
    super(ErrorKind.INVALID_REQUEST, describe(parts, api), param, CODE, null, null);
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("an unsupported_on_local refusal names at least one part");
    }
    this.parts = List.copyOf(parts);
    this.api = api;
  }

  /** What local cannot do, in the order the request asked for it. */
  public List<String> parts() {
    return parts;
  }

  /** The API the request came in on. */
  public String api() {
    return api;
  }

  /** "The local model cannot handle X, Y in the Responses API." */
  private static String describe(List<String> parts, String api) {
    return "The local model cannot handle " + String.join(", ", parts) + " in the " + api + ".";
  }
}
