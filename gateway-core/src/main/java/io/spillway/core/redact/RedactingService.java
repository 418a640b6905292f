package io.spillway.core.redact;

import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.util.concurrent.CompletionStage;

/**
 * The last thing every answer passes on its way to the client: header values, buffered bodies,
 * each streamed event, and the message of a failure (before the answer, or one that ends a stream
 * as an error event) are run through one {@link Redactor}. Whatever a backend echoes, and whatever
 * a stage quotes from it, leaves the gateway redacted.
 */
public final class RedactingService implements HttpService {
  private final HttpService delegate;
  private final Redactor redactor;

  private RedactingService(HttpService delegate, Redactor redactor) {
    this.delegate = delegate;
    this.redactor = redactor;
  }

  /** {@code service} with its answers redacted; {@code service} itself when there is nothing to redact. */
  public static HttpService wrap(HttpService service, Redactor redactor) {
    return redactor == Redactor.NONE ? service : new RedactingService(service, redactor);
  }

  @Override
  public GatewayResponse serve(ServerRequest request) {
    GatewayResponse response;
    try {
      response = delegate.serve(request);
    } catch (GatewayException e) {
      throw redacted(e);
    }
    return redacted(response);
  }

  @Override
  public CompletionStage<GatewayResponse> serveAsync(ServerRequest request) {
    CompletionStage<GatewayResponse> answer;
    try {
      answer = delegate.serveAsync(request);
    } catch (GatewayException e) {
      throw redacted(e);
    }
    return answer.handle((response, failure) -> {
      if (failure == null) {
        return redacted(response);
      }
      Throwable cause = Blocking.cause(failure);
      throw Blocking.rethrow(cause instanceof GatewayException e ? redacted(e) : cause);
    });
  }

  private GatewayResponse redacted(GatewayResponse answer) {
    GatewayResponse response = answer;
    Headers headers = redacted(response.headers());
    if (headers != response.headers()) {
      response = response.withHeaders(headers);
    }
    if (response.isStream()) {
      return response.withStream(new RedactedStream(response.stream()));
    }
    byte[] body = response.body();
    byte[] redacted = redactor.redact(body);
    return redacted == body ? response : response.withBody(redacted);
  }

  private Headers redacted(Headers headers) {
    Headers.Builder out = null;
    for (int i = 0; i < headers.size(); i++) {
      String value = headers.value(i);
      String redacted = redactor.redact(value);
      if (redacted != value && out == null) {
        out = Headers.builder();
        for (int j = 0; j < i; j++) {
          out.add(headers.name(j), headers.value(j));
        }
      }
      if (out != null) {
        out.add(headers.name(i), redacted);
      }
    }
    return out == null ? headers : out.build();
  }

  private GatewayException redacted(GatewayException e) {
    String message = e.getMessage();
    String redacted = redactor.redact(message);
    String code = redactor.redact(e.code());
    String param = redactor.redact(e.param());
    if (redacted == message && code == e.code() && param == e.param()) {
      return e;
    }
    return new GatewayException(e.kind(), redacted, param, code, e.retryAfter(), null);
  }

  private final class RedactedStream extends ForwardingEventStream {
    private final SseEvent.Bytes<Boolean> holdsSecret = redactor::contains;

    RedactedStream(EventStream delegate) {
      super(delegate);
    }

    @Override
    public SseEvent poll() {
      SseEvent event;
      try {
        event = delegate.poll();
      } catch (GatewayException e) {
        throw redacted(e);
      }
      if (event == null || event == SseEvent.PENDING) {
        return event;
      }
      if (event.asArrived()) {
        // Its bytes, comments and id lines too, are what would leave: scanned as they are, and an
        // event that holds a secret anywhere leaves remade from its redacted name and data.
        if (!event.wire(holdsSecret)) {
          return event;
        }
        return new SseEvent(redactor.redact(event.event()), redactor.redact(event.data()));
      }
      String data = redactor.redact(event.data());
      String name = redactor.redact(event.event());
      return data == event.data() && name == event.event() ? event : new SseEvent(name, data);
    }
  }
}
