package io.spillway.app.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A raw-socket HTTP/1.1 upstream (keep-alive) where the test decides, request by request, what is
 * written and whether the connection is then held, answer unfinished, until the gateway closes it:
 * the upstream call a departing client must cancel. Counts the requests and the held connections
 * the gateway closed.
 */
public final class HoldingUpstream implements AutoCloseable {
  /** Answers one request. */
  @FunctionalInterface
  public interface Answer {
    /**
     * Writes what request number {@code n} (from 1, over all connections) gets; returns true to
     * hold the connection, sending nothing more, until the gateway closes it.
     */
    boolean answer(int n, String body, OutputStream out) throws IOException;
  }

  /** Requests read so far. */
  public final AtomicInteger requests = new AtomicInteger();
  /** Held connections the gateway has closed (or reset). */
  public final AtomicInteger closedWhileHeld = new AtomicInteger();
  private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
  private final Answer answer;

  public HoldingUpstream(Answer answer) throws IOException {
    this.answer = answer;
    Thread.ofVirtual().start(() -> {
      while (!server.isClosed()) {
        try {
          Socket socket = server.accept();
          Thread.ofVirtual().start(() -> serve(socket));
        } catch (IOException e) {
          return;
        }
      }
    });
  }

  /** The OpenAI-style base URL, ending in {@code /v1}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      while (true) {
        String head = RequestHeads.readHead(in);
        if (head == null) {
          return;
        }
        String body = new String(in.readNBytes(RequestHeads.contentLength(head)), StandardCharsets.UTF_8);
        OutputStream out = socket.getOutputStream();
        boolean hold = answer.answer(requests.incrementAndGet(), body, out);
        out.flush();
        if (hold) {
          awaitClose(in);
          closedWhileHeld.incrementAndGet();
          return;
        }
      }
    } catch (IOException e) {
      // the gateway went away while this connection was being answered
    }
  }

  private static void awaitClose(InputStream in) {
    try {
      while (in.read() >= 0) {
        // nothing more comes from the gateway: wait for it to close
      }
    } catch (IOException reset) {
      // a reset is a close too
    }
  }

  /** A complete JSON answer with a length, the connection kept alive. */
  public static void writeJson(OutputStream out, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    out.write(body);
  }

  /** The head of an SSE stream (chunked) and its first {@code events}, already in wire form, as one chunk. */
  public static void writeStreamStart(OutputStream out, String events) throws IOException {
    out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    ScriptedUpstream.writeChunk(out, events);
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
