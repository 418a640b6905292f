package io.spillway.app.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, sending the request line exactly as written: no client library
 * normalizes {@code ..}, {@code %2e} or {@code //} away before the gateway sees them.
 */
final class RawHttp implements AutoCloseable {
  record Answer(int status, String head, String body) {}

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  RawHttp(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(10_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  Answer send(String method, String target, String authorization, String body) throws IOException {
    byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    StringBuilder request = new StringBuilder()
        .append(method).append(' ').append(target).append(" HTTP/1.1\r\n")
        .append("Host: 127.0.0.1\r\n");
    if (authorization != null) {
      request.append("Authorization: ").append(authorization).append("\r\n");
    }
    if (body != null) {
      request.append("Content-Type: application/json\r\n");
    }
    request.append("Content-Length: ").append(payload.length).append("\r\n\r\n");
    out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
    out.write(payload);
    out.flush();
    return read();
  }

  private Answer read() throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed after: " + head);
      }
      head.append((char) b);
    }
    String headText = head.toString();
    int status = Integer.parseInt(headText.substring(9, 12));
    int length = 0;
    for (String line : headText.split("\r\n")) {
      if (line.toLowerCase().startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return new Answer(status, headText, new String(body, StandardCharsets.UTF_8));
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
