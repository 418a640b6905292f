package io.spillway.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fake OpenAI upstream that streams slowly: for each chat request it sends one
 * {@code chat.completion.chunk} event every {@code --interval-ms} for {@code --events} events, then
 * (when the request asked with {@code include_usage}, as Spillway does) the usage chunk, then
 * {@code [DONE]}. One virtual thread per connection, so it holds tens of thousands of streams.
 *
 * <pre>java -cp spillway-bench.jar io.spillway.bench.SlowUpstream --port 18950 --events 30 --interval-ms 1000</pre>
 */
public final class SlowUpstream {
  private static final byte[] HEAD = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
      + "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
  private static final String EVENT = "data: {\"id\":\"chatcmpl-slow\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1741570283,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d \"},"
      + "\"finish_reason\":null}]}\n\n";
  private static final String USAGE = "data: {\"id\":\"chatcmpl-slow\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1741570283,\"model\":\"gpt-4o-mini\",\"choices\":[],"
      + "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n";

  private SlowUpstream() {}

  public static void main(String[] args) throws IOException {
    int port = Args.intValue(args, "--port", 18950);
    int events = Args.intValue(args, "--events", 30);
    long intervalMs = Args.intValue(args, "--interval-ms", 1000);
    AtomicLong open = new AtomicLong();
    try (ServerSocket server = new ServerSocket(port, 65535, InetAddress.getLoopbackAddress())) {
      System.out.println("slow upstream on 127.0.0.1:" + server.getLocalPort());
      while (true) {
        Socket socket = server.accept();
        Thread.ofVirtual().start(() -> serve(socket, events, intervalMs, open));
      }
    }
  }

  private static void serve(Socket socket, int events, long intervalMs, AtomicLong open) {
    open.incrementAndGet();
    try (socket) {
      socket.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (true) {
        int length = readHead(in);
        if (length < 0) {
          return;
        }
        boolean usage = new String(in.readNBytes(length), StandardCharsets.UTF_8).contains("\"include_usage\":true");
        out.write(HEAD);
        out.flush();
        for (int i = 0; i < events; i++) {
          chunk(out, EVENT.formatted(i));
          Thread.sleep(intervalMs);
        }
        if (usage) {
          chunk(out, USAGE.formatted(events * 2, 20 + events * 2));
        }
        chunk(out, "data: [DONE]\n\n");
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // the client went away; nothing to clean up beyond the socket
    } finally {
      open.decrementAndGet();
    }
  }

  /** One chunk in one write: the fake upstream shares the cores with what it measures. */
  private static void chunk(OutputStream out, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    byte[] size = (Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
    byte[] frame = new byte[size.length + bytes.length + 2];
    System.arraycopy(size, 0, frame, 0, size.length);
    System.arraycopy(bytes, 0, frame, size.length, bytes.length);
    frame[frame.length - 2] = '\r';
    frame[frame.length - 1] = '\n';
    out.write(frame);
    out.flush();
  }

  /** Reads a request head; returns its Content-Length, or -1 at end of input. */
  static int readHead(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int contentLength = 0;
    boolean any = false;
    while (true) {
      int b = in.read();
      if (b < 0) {
        return any ? 0 : -1;
      }
      any = true;
      if (b == '\n') {
        String text = line.toString().trim();
        if (text.isEmpty()) {
          return contentLength;
        }
        if (text.regionMatches(true, 0, "content-length:", 0, 15)) {
          contentLength = Integer.parseInt(text.substring(15).trim());
        }
        line.setLength(0);
      } else {
        line.append((char) b);
      }
    }
  }
}
