package io.spillway.app.observe;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps a metric tag's values bounded: the first {@code limit} distinct, well-formed, admissible
 * values are kept as they are, every later one becomes {@code other}. A value that is too long or
 * has characters a model or step name never has is {@code other} at once, so a client cannot mint
 * tags; so is one the caller does not admit (for models: neither configured nor answered by the
 * cloud), so names a client makes up cannot take the slots of real ones. Thread-safe.
 */
final class BoundedTagValues {
  static final String OTHER = "other";
  private static final int MAX_LENGTH = 64;

  private final int limit;
  private final Set<String> seen = ConcurrentHashMap.newKeySet();

  BoundedTagValues(int limit) {
    this.limit = limit;
  }

  String tag(String value) {
    return tag(value, true);
  }

  /** The tag for {@code value}; a value not yet kept takes a slot only when {@code admissible}. */
  String tag(String value, boolean admissible) {
    if (value == null || value.isEmpty()) {
      return "none";
    }
    if (seen.contains(value)) {
      return value;
    }
    if (!admissible || !wellFormed(value)) {
      return OTHER;
    }
    synchronized (seen) {
      if (seen.contains(value)) {
        return value;
      }
      if (seen.size() >= limit) {
        return OTHER;
      }
      seen.add(value);
      return value;
    }
  }

  private static boolean wellFormed(String value) {
    if (value.length() > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_' || c == '.' || c == ':' || c == '/';
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
