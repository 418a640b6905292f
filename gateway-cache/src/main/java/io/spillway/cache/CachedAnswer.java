package io.spillway.cache;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * One stored answer: a buffered body or the complete list of stream events, the headers to replay,
 * the tokens it cost when it was made, and the team whose request made it. Immutable; the body
 * array is never handed out for writing.
 */
record CachedAnswer(
    int status, Headers headers, byte[] body, List<SseEvent> events, long tokens, String team, Instant storedAt) {

  /** Fixed per-entry overhead the weigher adds to the bytes it can count. */
  static final int ENTRY_OVERHEAD = 256;

  private static final int EVENT_OVERHEAD = 48;

  static CachedAnswer buffered(int status, Headers headers, byte[] body, String team, Instant storedAt) {
    return new CachedAnswer(status, headers, body, null, bufferedTokens(body), team, storedAt);
  }

  static CachedAnswer streamed(int status, Headers headers, List<SseEvent> events, String team, Instant storedAt) {
    return new CachedAnswer(status, headers, null, List.copyOf(events), streamTokens(events), team, storedAt);
  }

  boolean isStream() {
    return events != null;
  }

  /** Rough bytes held, for the weigher; never below the real payload size. */
  int weight() {
    long bytes = ENTRY_OVERHEAD + headersWeight(headers);
    if (body != null) {
      bytes += body.length;
    } else {
      bytes += eventsWeight(events);
    }
    return (int) Math.min(Integer.MAX_VALUE, bytes);
  }

  static long eventWeight(SseEvent event) {
    return EVENT_OVERHEAD + event.size();
  }

  private static long eventsWeight(List<SseEvent> events) {
    long total = 0;
    for (SseEvent event : events) {
      total += eventWeight(event);
    }
    return total;
  }

  private static long headersWeight(Headers headers) {
    long total = 0;
    for (int i = 0; i < headers.size(); i++) {
      total += 32 + headers.name(i).length() + headers.value(i).length();
    }
    return total;
  }

  /** The answer as a fresh response; {@code now} sets {@code Age}. */
  GatewayResponse replay(Instant now) {
    long age = Math.max(0, Duration.between(storedAt, now).toSeconds());
    Headers out = headers.toBuilder().set(ResponseCache.HEADER, "hit").set("age", Long.toString(age)).build();
    if (events != null) {
      return GatewayResponse.streamed(status, out, new ListedEventStream(events));
    }
    return GatewayResponse.buffered(status, out, body);
  }

  /**
   * Whether a buffered 2xx answer is a whole, normal answer: a JSON object without an
   * {@code error} member, for the Responses API one whose {@code status} is {@code completed}, for
   * Anthropic's Messages API a {@code message}.
   */
  static boolean completeBuffered(Route route, byte[] body) {
    JsonNode root;
    try {
      root = Json.parse(body);
    } catch (IOException e) {
      return false;
    }
    if (root == null || !root.isObject() || present(root.get("error"))) {
      return false;
    }
    if (route == Route.MESSAGES) {
      return "message".equals(Json.text(root, "type"));
    }
    return route != Route.RESPONSES || "completed".equals(Json.text(root, "status"));
  }

  /**
   * Whether a stream ended the way a finished answer ends: {@code [DONE]} for chat and completions,
   * {@code response.completed} for the Responses API, {@code message_stop} for Anthropic's Messages
   * API, and no error event anywhere in it.
   */
  static boolean completeStream(Route route, List<SseEvent> events) {
    if (events.isEmpty()) {
      return false;
    }
    for (SseEvent event : events) {
      if (isError(event)) {
        return false;
      }
    }
    SseEvent last = events.get(events.size() - 1);
    if (route == Route.RESPONSES) {
      return last.nameIs("response.completed") || "response.completed".equals(type(last));
    }
    if (route == Route.MESSAGES) {
      return last.nameIs("message_stop") || "message_stop".equals(type(last));
    }
    return last.isDone();
  }

  private static boolean isError(SseEvent event) {
    String name = event.named() ? event.event() : null;
    if (name != null) {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.equals("error") || lower.equals("response.failed") || lower.equals("response.incomplete")) {
        return true;
      }
    }
    if (event.isDone() || !event.mayContain("\"error\"")) {
      return false;
    }
    JsonNode data = parse(event.data());
    if (data == null) {
      return false;
    }
    String type = Json.text(data, "type");
    return present(data.get("error")) || "error".equals(type) || "response.failed".equals(type);
  }

  private static String type(SseEvent event) {
    if (!event.mayContain("\"type\"")) {
      return null;
    }
    return Json.text(parse(event.data()), "type");
  }

  /** Total tokens the answer reported, or 0 when it reported none. */
  static long bufferedTokens(byte[] body) {
    try {
      JsonNode root = Json.parse(body);
      return root == null ? 0 : usageTokens(root.get("usage"));
    } catch (IOException e) {
      return 0;
    }
  }

  /** From the last event that carries usage (chat's usage chunk, or {@code response.completed}). */
  static long streamTokens(List<SseEvent> events) {
    for (int i = events.size() - 1; i >= 0; i--) {
      SseEvent event = events.get(i);
      if (event.isDone() || !event.mayContain("\"usage\"")) {
        continue;
      }
      JsonNode data = parse(event.data());
      if (data == null) {
        continue;
      }
      long tokens = usageTokens(data.get("usage"));
      if (tokens == 0 && data.get("response") != null) {
        tokens = usageTokens(data.get("response").get("usage"));
      }
      if (tokens > 0) {
        return tokens;
      }
    }
    return 0;
  }

  private static long usageTokens(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return 0;
    }
    JsonNode total = usage.get("total_tokens");
    if (total != null && total.isIntegralNumber()) {
      return Math.max(0, total.asLong());
    }
    return Math.max(0, usage.path("prompt_tokens").asLong(0) + usage.path("completion_tokens").asLong(0)
        + usage.path("input_tokens").asLong(0) + usage.path("output_tokens").asLong(0));
  }

  private static JsonNode parse(String data) {
    try {
      return Json.parse(data);
    } catch (IOException e) {
      return null;
    }
  }

  private static boolean present(JsonNode node) {
    return node != null && !node.isNull();
  }
}
