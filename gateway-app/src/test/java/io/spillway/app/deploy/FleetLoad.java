package io.spillway.app.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients of every tier sending chat requests through the load balancer, streamed and buffered in
 * turn, each waiting for its answer before the next, until {@link #stop}. Every request carries an
 * {@code X-Test-Id} and is recorded with what its client got.
 */
final class FleetLoad {
  /** One request as its client saw it. {@code tokens} is the usage the answer reported (0 for a failure). */
  record Result(String id, String team, boolean stream, Instant start, Instant end, int status, String backend,
      long tokens, String error) {
    boolean ok() {
      return error == null;
    }
  }

  /** A tier's key and the team it belongs to. */
  record Client(String key, String team) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger IDS = new AtomicInteger();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String baseUrl;
  private final List<Client> clients;
  private final Duration timeout;
  private final ConcurrentLinkedQueue<Result> results = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean();
  private ExecutorService workers;

  FleetLoad(String baseUrl, List<Client> clients, Duration timeout) {
    this.baseUrl = baseUrl;
    this.clients = clients;
    this.timeout = timeout;
  }

  /** Starts {@code perClient} concurrent senders for every client. */
  FleetLoad start(int perClient) {
    running.set(true);
    workers = Executors.newVirtualThreadPerTaskExecutor();
    for (Client client : clients) {
      for (int i = 0; i < perClient; i++) {
        boolean streamFirst = i % 2 == 0;
        workers.submit(() -> {
          boolean stream = streamFirst;
          while (running.get()) {
            results.add(send(client, stream));
            stream = !stream;
          }
        });
      }
    }
    return this;
  }

  /** Stops sending, waits for the answers still coming, and returns every request of this run. */
  List<Result> stop() throws InterruptedException {
    running.set(false);
    workers.shutdown();
    if (!workers.awaitTermination(timeout.toSeconds() + 10, TimeUnit.SECONDS)) {
      throw new AssertionError("requests still running " + timeout + " after the load stopped");
    }
    return new ArrayList<>(results);
  }

  /** The requests answered so far. */
  List<Result> soFar() {
    return new ArrayList<>(results);
  }

  /** One request, to its end: the answer's usage, or what went wrong in words. */
  Result send(Client client, boolean stream) {
    String id = "t" + IDS.incrementAndGet();
    String body = "{\"model\":\"gpt-4o\",\"stream\":" + stream
        + (stream ? ",\"stream_options\":{\"include_usage\":true}" : "")
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Write a haiku about rivers, please (" + id + ")\"}]}";
    HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/chat/completions"))
        .timeout(timeout)
        .header("Authorization", "Bearer " + client.key())
        .header("Content-Type", "application/json")
        .header("X-Test-Id", id)
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
    Instant start = Instant.now();
    int status = -1;
    String backend = "";
    try {
      HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      status = response.statusCode();
      backend = response.headers().firstValue("x-spillway-backend").orElse("");
      try (InputStream in = response.body()) {
        if (status != 200) {
          String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
          return new Result(id, client.team(), stream, start, Instant.now(), status, backend, 0, "HTTP " + status + ": " + text);
        }
        long tokens = stream ? streamUsage(in) : JSON.readTree(in).path("usage").path("total_tokens").asLong(-1);
        if (tokens < 0) {
          return new Result(id, client.team(), stream, start, Instant.now(), status, backend, 0, "no usage in the answer");
        }
        return new Result(id, client.team(), stream, start, Instant.now(), status, backend, tokens, null);
      }
    } catch (HttpTimeoutException e) {
      return new Result(id, client.team(), stream, start, Instant.now(), status, backend, 0, "HUNG: no answer within " + timeout);
    } catch (IOException e) {
      return new Result(id, client.team(), stream, start, Instant.now(), status, backend, 0, "cut: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(id, client.team(), stream, start, Instant.now(), status, backend, 0, "interrupted");
    }
  }

  /** Reads a stream to {@code data: [DONE]}; its usage chunk's total, or an IOException when it ends early. */
  private static long streamUsage(InputStream in) throws IOException {
    BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    long tokens = -1;
    String line;
    while ((line = reader.readLine()) != null) {
      if (line.equals("data: [DONE]")) {
        return tokens;
      }
      if (line.startsWith("data: ")) {
        JsonNode event = JSON.readTree(line.substring(6));
        if (event.has("error")) {
          throw new IOException("error event in the stream: " + event);
        }
        if (event.path("usage").isObject()) {
          tokens = event.path("usage").path("total_tokens").asLong();
        }
      }
    }
    throw new IOException("the stream ended without data: [DONE]");
  }

  /** Tokens of the successful answers, per team. */
  static Map<String, Long> answeredTokens(List<Result> results) {
    Map<String, Long> perTeam = new java.util.TreeMap<>();
    for (Result r : results) {
      if (r.ok()) {
        perTeam.merge(r.team(), r.tokens(), Long::sum);
      }
    }
    return perTeam;
  }
}
