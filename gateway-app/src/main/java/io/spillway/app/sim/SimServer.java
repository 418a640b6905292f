package io.spillway.app.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The small HTTP server under the simulators: the JDK's {@link HttpServer} with a virtual thread per
 * exchange, exact-path routes, and a chunked writer that flushes every piece, so a simulated stream
 * really arrives piece by piece.
 */
abstract class SimServer implements AutoCloseable {
  /** One route's handler. */
  @FunctionalInterface
  interface Handler {
    void handle(HttpExchange exchange) throws IOException;
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final Map<String, Map<String, Handler>> routes = new LinkedHashMap<>();

  SimServer(String host, int port) {
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::dispatch);
  }

  void route(String method, String path, Handler handler) {
    routes.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(method, handler);
  }

  private void dispatch(HttpExchange exchange) throws IOException {
    try (exchange) {
      Map<String, Handler> byMethod = routes.get(exchange.getRequestURI().getPath());
      Handler handler = byMethod == null ? null : byMethod.get(exchange.getRequestMethod());
      if (handler == null) {
        notFound(exchange);
        return;
      }
      try {
        handler.handle(exchange);
      } catch (BadRequest e) {
        badRequest(exchange, e.getMessage());
      }
    } catch (IOException e) {
      // The client went away mid-answer: nothing left to tell it.
    }
  }

  /** The body of a simulator's 404 in the simulated API's own error format. */
  abstract void notFound(HttpExchange exchange) throws IOException;

  /** A 400 in the simulated API's own error format. */
  abstract void badRequest(HttpExchange exchange, String message) throws IOException;

  SimServer start() {
    server.start();
    return this;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  String origin() {
    return "http://" + server.getAddress().getHostString() + ":" + port();
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }

  static ObjectNode readJson(HttpExchange exchange) throws IOException {
    byte[] bytes = exchange.getRequestBody().readAllBytes();
    try {
      JsonNode node = Json.parse(bytes);
      if (node instanceof ObjectNode object) {
        return object;
      }
    } catch (IOException e) {
      // fall through
    }
    throw new BadRequest("the body must be a JSON object");
  }

  static void send(HttpExchange exchange, int status, String contentType, String body, String... headers)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", contentType);
    for (int i = 0; i + 1 < headers.length; i += 2) {
      exchange.getResponseHeaders().set(headers[i], headers[i + 1]);
    }
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  static void sendJson(HttpExchange exchange, int status, JsonNode body, String... headers) throws IOException {
    send(exchange, status, "application/json", Json.toString(body), headers);
  }

  /** A chunked answer written piece by piece; each {@link #write} reaches the client at once. */
  static final class Chunks implements AutoCloseable {
    private final OutputStream out;
    private final Duration pause;
    private boolean first = true;

    Chunks(HttpExchange exchange, String contentType, Duration pause) throws IOException {
      exchange.getResponseHeaders().set("Content-Type", contentType);
      exchange.getResponseHeaders().set("Cache-Control", "no-cache");
      exchange.sendResponseHeaders(200, 0);
      this.out = exchange.getResponseBody();
      this.pause = pause;
    }

    /** Writes and flushes {@code text}; waits the simulated time per token before every piece but the first. */
    void write(String text) throws IOException {
      if (!first && !pause.isZero()) {
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted", e);
        }
      }
      first = false;
      out.write(text.getBytes(StandardCharsets.UTF_8));
      out.flush();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }

  /** A request the simulator cannot make sense of. */
  static final class BadRequest extends RuntimeException {
    BadRequest(String message) {
      super(message, null, false, false);
    }
  }
}
