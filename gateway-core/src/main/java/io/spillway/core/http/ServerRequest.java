package io.spillway.core.http;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.ClientDisconnect;
import java.time.Instant;
import java.util.concurrent.Executor;

/**
 * A complete HTTP request as the front end hands it to an {@link HttpService}: no Netty types.
 *
 * @param path the path without the query string
 * @param requestId the client's {@code x-request-id} when it sent a usable one, else a fresh id
 * @param disconnect signalled when the client goes away before its answer is complete
 * @param loop the client connection's event loop, where the request's upstream exchange should run
 *     (one thread from client socket to upstream socket); null when there is none
 */
public record ServerRequest(
    String method,
    String path,
    String query,
    Headers headers,
    byte[] body,
    String requestId,
    String remoteAddress,
    Instant receivedAt,
    ClientDisconnect disconnect,
    Executor loop) {

  /** A request that arrived on no event loop (tests, internal calls). */
  public ServerRequest(String method, String path, String query, Headers headers, byte[] body, String requestId,
      String remoteAddress, Instant receivedAt, ClientDisconnect disconnect) {
    this(method, path, query, headers, body, requestId, remoteAddress, receivedAt, disconnect, null);
  }
}
