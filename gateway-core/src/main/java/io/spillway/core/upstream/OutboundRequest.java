package io.spillway.core.upstream;

import io.spillway.core.http.Headers;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * One request to send upstream over {@link UpstreamHttp}.
 *
 * @param backend the backend's name, for the failures the exchange reports
 * @param body the exact bytes to send; null for a request without a body
 * @param connectTimeout the longest wait for a new connection (TCP and TLS)
 * @param headTimeout the longest wait, from sending, for the whole response head
 * @param wholeTimeout the longest the whole exchange, body included, may take; null for a stream,
 *     whose body has a limit per event instead
 * @param affinity the executor (the client connection's event loop) the exchange should run on, so
 *     one request stays on one thread from client socket to upstream socket; null: any
 * @param h2c speak HTTP/2 with prior knowledge to a plain-HTTP upstream (over TLS, ALPN decides)
 */
public record OutboundRequest(
    String backend,
    String method,
    URI uri,
    Headers headers,
    byte[] body,
    Duration connectTimeout,
    Duration headTimeout,
    Duration wholeTimeout,
    Executor affinity,
    boolean h2c) {}
