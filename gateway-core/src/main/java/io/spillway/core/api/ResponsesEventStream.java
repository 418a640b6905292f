package io.spillway.core.api;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.sse.StreamErrors;
import java.util.List;

/**
 * A Responses API stream: its events pass as they are, and a failure after the first byte ends it
 * with the API's typed {@code error} event ({@link StreamErrors#responses}) instead of the chat
 * shape. {@link OpenAiEndpoint} puts every {@code /v1/responses} stream in one.
 */
final class ResponsesEventStream extends ForwardingEventStream {
  ResponsesEventStream(EventStream delegate) {
    super(delegate);
  }

  @Override
  public List<SseEvent> errorEvents(GatewayException e) {
    return StreamErrors.responses(e);
  }

  @Override
  public String toString() {
    return "Responses(" + delegate + ")";
  }
}
