package io.spillway.core.sse;

/**
 * What the gateway checks of an upstream's events before relaying them, whichever way the stream is
 * read: every event but {@code [DONE]} carries a JSON object, and a stream is complete only with
 * its terminal event.
 */
public final class UpstreamEvents {
  private UpstreamEvents() {}

  /** Whether {@code data} is shaped as one JSON object: its first and last non-blank characters are braces. */
  public static boolean jsonObject(String data) {
    int start = 0;
    int end = data.length() - 1;
    while (start <= end && Character.isWhitespace(data.charAt(start))) {
      start++;
    }
    while (end > start && Character.isWhitespace(data.charAt(end))) {
      end--;
    }
    return start < end && data.charAt(start) == '{' && data.charAt(end) == '}';
  }

  public static boolean isTerminal(SseEvent event) {
    if (event.isDone()) {
      return true;
    }
    return event.named()
        && (event.nameIs("response.completed") || event.nameIs("response.failed")
            || event.nameIs("response.incomplete") || event.nameIs("error")
            // Anthropic's Messages stream ends with message_stop and no [DONE].
            || event.nameIs("message_stop"));
  }
}
