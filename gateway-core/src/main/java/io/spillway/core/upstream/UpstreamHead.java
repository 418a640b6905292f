package io.spillway.core.upstream;

import io.spillway.core.http.Headers;

/**
 * The head of an upstream's answer: status and headers as received (names lower-case), and the
 * protocol it came over ({@code h2} or {@code http/1.1}).
 */
public record UpstreamHead(int status, Headers headers, String protocol) {
  public String header(String name) {
    return headers.get(name);
  }
}
