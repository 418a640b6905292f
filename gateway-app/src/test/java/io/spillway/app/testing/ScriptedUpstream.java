package io.spillway.app.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A raw-socket HTTP upstream whose answer a test writes byte by byte, for what WireMock cannot
 * express: holding a stream open until the test says so, or cutting it mid-event.
 */
public final class ScriptedUpstream implements AutoCloseable {
  /** Writes the answer to one request. */
  @FunctionalInterface
  public interface Script {
    void answer(String requestHead, OutputStream out) throws Exception;
  }

  private final ServerSocket server;
  private final Thread acceptor;
  private volatile Script script;
  public final CountDownLatch connectionClosedByPeer = new CountDownLatch(1);

  public ScriptedUpstream(Script script) throws IOException {
    this.script = script;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = Thread.ofVirtual().start(this::acceptLoop);
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        Thread.ofVirtual().start(() -> serve(socket));
      } catch (IOException e) {
        return;
      }
    }
  }

  /** Thrown by a script to end its connection with a TCP reset (RST) instead of a clean close. */
  public static final class Reset extends RuntimeException {
    public Reset() {
      super("reset by the script", null, false, false);
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      String head = RequestHeads.requireHead(in);
      int length = RequestHeads.contentLength(head);
      in.readNBytes(length);
      try {
        script.answer(head, socket.getOutputStream());
        socket.getOutputStream().flush();
      } catch (Reset reset) {
        socket.setSoLinger(true, 0);
      }
    } catch (IOException e) {
      connectionClosedByPeer.countDown();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }



  /** Writes an SSE stream head (chunked). */
  public static void writeStreamHead(OutputStream out) throws IOException {
    out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
        + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** Writes one chunk of a chunked body. */
  public static void writeChunk(OutputStream out, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  public static void endChunks(OutputStream out) throws IOException {
    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  public static void await(CountDownLatch latch) throws InterruptedException {
    if (!latch.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("timed out waiting for the test's signal");
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    acceptor.interrupt();
  }
}
