package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;

/**
 * The rule both accounting stages follow about a stream's usage chunk: a chat/completions or
 * completions stream whose client did not ask for {@code stream_options.include_usage} is sent
 * upstream asking for it (quota accounting needs the counts), and the chunk is taken out again
 * before the client sees the stream (token reporting), a replay from the cache included.
 */
final class StreamUsageOption {
  private StreamUsageOption() {}

  /** Whether {@code request} is a stream whose usage chunk Spillway asks for and the client did not. */
  static boolean addedBySpillway(GatewayRequest request) {
    if (!request.stream() || (request.route() != Route.CHAT_COMPLETIONS && request.route() != Route.COMPLETIONS)) {
      return false;
    }
    JsonNode options = request.body().get("stream_options");
    return options == null || !options.path("include_usage").asBoolean(false);
  }

  /**
   * A copy of the body that asks the upstream to end the stream with a usage chunk. Only the top
   * level and {@code stream_options} are copied: the messages and tools (the bulk of an agent's
   * request) are shared with the client's body, which no stage changes in place.
   */
  static ObjectNode askingForUsage(ObjectNode body) {
    ObjectNode copy = body.objectNode();
    copy.setAll(body);
    JsonNode options = body.get("stream_options");
    ObjectNode streamOptions = options instanceof ObjectNode existing ? existing.deepCopy() : null;
    if (streamOptions != null) {
      copy.set("stream_options", streamOptions);
    } else {
      streamOptions = copy.putObject("stream_options");
    }
    streamOptions.put("include_usage", true);
    return copy;
  }
}
