package io.spillway.app.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A deliberately dumb HTTP/1.1 client on a plain socket, for what real clients refuse to send:
 * smuggling attempts, injected header bytes, pipelined requests, bytes dribbled one at a time.
 */
public final class RawHttp implements AutoCloseable {
  /** One parsed answer. {@code body} is de-chunked. */
  public record Answer(int status, Map<String, String> headers, String body) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  public RawHttp(int port) throws IOException {
    this(port, 0);
  }

  /** {@code receiveBuffer} > 0 shrinks the socket's receive buffer (for slow-reader tests). */
  public RawHttp(int port, int receiveBuffer) throws IOException {
    socket = new Socket();
    if (receiveBuffer > 0) {
      socket.setReceiveBufferSize(receiveBuffer);
    }
    socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 5_000);
    socket.setSoTimeout(15_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  public static String post(String path, String key, String body, String... extraHeaderLines) {
    StringBuilder request = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: gateway\r\n");
    if (key != null) {
      request.append("Authorization: Bearer ").append(key).append("\r\n");
    }
    request.append("Content-Type: application/json\r\n");
    for (String line : extraHeaderLines) {
      request.append(line).append("\r\n");
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    request.append("Content-Length: ").append(bytes.length).append("\r\n\r\n").append(body);
    return request.toString();
  }

  public RawHttp send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  public RawHttp send(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
    return this;
  }

  public InputStream input() {
    return in;
  }

  public Socket socket() {
    return socket;
  }

  public void timeout(int millis) throws IOException {
    socket.setSoTimeout(millis);
  }

  /** Reads one whole answer (Content-Length or chunked). */
  public Answer read() throws IOException {
    String statusLine = line();
    if (statusLine == null) {
      throw new IOException("connection closed before an answer");
    }
    int status = Integer.parseInt(statusLine.split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    String line;
    while (!(line = line()).isEmpty()) {
      int colon = line.indexOf(':');
      headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      while (true) {
        int size = Integer.parseInt(line().split(";")[0].trim(), 16);
        if (size == 0) {
          line();
          break;
        }
        body.write(in.readNBytes(size));
        line();
      }
    } else {
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      body.write(in.readNBytes(length));
    }
    return new Answer(status, headers, body.toString(StandardCharsets.UTF_8));
  }

  /** Reads the status line and headers of an answer, leaving its body unread. */
  public Answer readHead() throws IOException {
    String statusLine = line();
    if (statusLine == null) {
      throw new IOException("connection closed before an answer");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    String line;
    while (!(line = line()).isEmpty()) {
      int colon = line.indexOf(':');
      headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
    }
    return new Answer(Integer.parseInt(statusLine.split(" ")[1]), headers, "");
  }

  /** True when the gateway closed the connection (end of stream, or reset) within the socket timeout. */
  public boolean closedByPeer() throws IOException {
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n') {
        String text = line.toString(StandardCharsets.ISO_8859_1);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      }
      line.write(b);
    }
    return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
