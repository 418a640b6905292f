package io.spillway.core.http;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.ClientDisconnect;
import java.time.Instant;

/**
 * A complete HTTP request as the front end hands it to an {@link HttpService}: no Netty types.
 *
 * @param path the path without the query string
 * @param requestId the client's {@code x-request-id} when it sent a usable one, else a fresh id
 * @param disconnect signalled when the client goes away before its answer is complete
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
    ClientDisconnect disconnect) {}
