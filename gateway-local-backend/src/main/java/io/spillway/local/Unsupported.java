package io.spillway.local;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects what a request asks for that the local backend cannot do (tools in the Responses API,
 * remote image URLs, audio, ...). Such a request is refused as a whole with 503 and
 * {@code Retry-After}, naming every unsupported part, rather than answered differently from how the
 * cloud would answer it. Not thread-safe.
 */
public final class Unsupported {
  public static final String CODE = "unsupported_on_local";

  private final List<String> what = new ArrayList<>();
  private String firstParam;

  public void add(String description, String param) {
    if (!what.contains(description)) {
      what.add(description);
    }
    if (firstParam == null) {
      firstParam = param;
    }
  }

  public boolean isEmpty() {
    return what.isEmpty();
  }

  /** Throws the refusal if anything was collected. */
  public void throwIfAny(String api, Duration retryAfter) {
    if (what.isEmpty()) {
      return;
    }
    throw new GatewayException(ErrorKind.UNAVAILABLE,
        "Spillway is serving this request from its local model, which cannot handle "
            + String.join(", ", what) + " in the " + api
            + ". Retry after the Retry-After interval, when the cloud serves again, or send a request without them.",
        firstParam, CODE, retryAfter, null);
  }
}
