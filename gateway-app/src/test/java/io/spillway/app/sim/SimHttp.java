package io.spillway.app.sim;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Raw HTTP against the simulators, for what an SDK would hide (status, exact body, NDJSON lines). */
final class SimHttp {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private SimHttp() {}

  static HttpResponse<String> post(String url, String bearer, String json) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
    if (bearer != null) {
      request.header("Authorization", "Bearer " + bearer);
    }
    return send(request.build());
  }

  static HttpResponse<String> get(String url, String bearer) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).GET();
    if (bearer != null) {
      request.header("Authorization", "Bearer " + bearer);
    }
    return send(request.build());
  }

  private static HttpResponse<String> send(HttpRequest request) {
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
