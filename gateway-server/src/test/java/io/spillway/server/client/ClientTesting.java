package io.spillway.server.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamExchange;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executor;

/** Requests and reads the client tests share. */
final class ClientTesting {
  static final Duration CONNECT = Duration.ofSeconds(2);
  static final Duration HEAD = Duration.ofSeconds(5);
  static final Duration WHOLE = Duration.ofSeconds(10);

  private ClientTesting() {}

  /** A buffered POST with generous timeouts, on any loop, HTTP/1.1 unless ALPN says otherwise. */
  static OutboundRequest post(URI uri) {
    return post(uri, null, false);
  }

  static OutboundRequest post(URI uri, Executor affinity, boolean h2c) {
    return new OutboundRequest("cloud", "POST", uri, Headers.of("content-type", "application/json"),
        "{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_8), CONNECT, HEAD, WHOLE, affinity, h2c);
  }

  /** A streamed POST: no whole timeout, the reader bounds it. */
  static OutboundRequest stream(URI uri, boolean h2c) {
    return new OutboundRequest("cloud", "POST", uri, Headers.of("content-type", "application/json"),
        "{\"stream\":true}".getBytes(StandardCharsets.UTF_8), CONNECT, HEAD, null, null, h2c);
  }

  static OutboundRequest withAffinity(OutboundRequest r, Executor affinity) {
    return new OutboundRequest(r.backend(), r.method(), r.uri(), r.headers(), r.body(), r.connectTimeout(),
        r.headTimeout(), r.wholeTimeout(), affinity, r.h2c());
  }

  static OutboundRequest withTimeouts(OutboundRequest r, Duration connect, Duration head, Duration whole) {
    return new OutboundRequest(r.backend(), r.method(), r.uri(), r.headers(), r.body(), connect, head, whole,
        r.affinity(), r.h2c());
  }

  /** The whole answer's text (status 200 checked), read as a backend reads it. */
  static String text(UpstreamExchange exchange) {
    assertThat(UpstreamCalls.head(exchange).status()).isEqualTo(200);
    return new String(UpstreamCalls.readAll(exchange.body(), Long.MAX_VALUE), StandardCharsets.UTF_8);
  }

  /** The failure the head of {@code exchange} ends with. */
  static UpstreamException headFailure(UpstreamExchange exchange) {
    Throwable thrown = catchThrowable(() -> UpstreamCalls.head(exchange));
    assertThat(thrown).isInstanceOf(UpstreamException.class);
    return (UpstreamException) thrown;
  }
}
