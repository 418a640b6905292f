package io.spillway.local;

import io.spillway.core.error.UnsupportedOnLocalException;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects what a request asks for that the local backend cannot do (stored conversations, remote
 * image URLs, audio, ...). Such a request is refused as a whole with an
 * {@link UnsupportedOnLocalException} naming every unsupported part, rather than answered
 * differently from how the cloud would answer it. Whether the client may retry, and when, is the
 * router's to say (it asks the breaker), so the refusal carries no {@code Retry-After}. Not
 * thread-safe.
 */
public final class Unsupported {
  public static final String CODE = UnsupportedOnLocalException.CODE;

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
  public void throwIfAny(String api) {
    if (!what.isEmpty()) {
      throw new UnsupportedOnLocalException(what, api, firstParam);
    }
  }
}
