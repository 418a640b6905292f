package io.spillway.app.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A load balancer in front of a fleet of gateways, as simple as one gets: each request goes to the
 * next replica in turn (round robin), its method, path, body and the headers a client sends
 * ({@code Authorization}, {@code Content-Type}, {@code Accept}) passed on, and the answer relayed
 * whole with its status and the headers a test reads ({@code Content-Type}, {@code
 * x-spillway-backend}, {@code x-request-id}). A streamed answer is relayed once complete, which is
 * enough for a client that reads it to its end. Records which replica got each request. On an
 * ephemeral loopback port; thread-safe.
 */
public final class RoundRobinFront implements AutoCloseable {
  private static final List<String> REQUEST_HEADERS = List.of("Authorization", "Content-Type", "Accept");
  private static final List<String> ANSWER_HEADERS = List.of("Content-Type", "x-spillway-backend", "x-request-id");

  private final HttpServer server;
  private final List<String> replicas;
  private final AtomicInteger next = new AtomicInteger();
  private final List<Integer> served = new CopyOnWriteArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private RoundRobinFront(HttpServer server, List<String> replicas) {
    this.server = server;
    this.replicas = List.copyOf(replicas);
  }

  /** Starts in front of {@code replicas}, each an origin such as {@code http://127.0.0.1:4711}. */
  public static RoundRobinFront start(List<String> replicas) {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      RoundRobinFront front = new RoundRobinFront(server, replicas);
      server.createContext("/", front::forward);
      server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
      server.start();
      return front;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The base URL clients are given, ending in {@code /v1}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  /** The index of the replica each request went to, in order. */
  public List<Integer> served() {
    return List.copyOf(served);
  }

  private void forward(HttpExchange exchange) throws IOException {
    try (exchange) {
      int replica = Math.floorMod(next.getAndIncrement(), replicas.size());
      served.add(replica);
      byte[] body = exchange.getRequestBody().readAllBytes();
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(replicas.get(replica) + exchange.getRequestURI()))
          .timeout(Duration.ofSeconds(30))
          .method(exchange.getRequestMethod(), body.length == 0
              ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
      for (String name : REQUEST_HEADERS) {
        String value = exchange.getRequestHeaders().getFirst(name);
        if (value != null) {
          request.header(name, value);
        }
      }
      HttpResponse<byte[]> answer;
      try {
        answer = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
      for (String name : ANSWER_HEADERS) {
        answer.headers().firstValue(name).ifPresent(value -> exchange.getResponseHeaders().set(name, value));
      }
      exchange.sendResponseHeaders(answer.statusCode(), answer.body().length == 0 ? -1 : answer.body().length);
      exchange.getResponseBody().write(answer.body());
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
