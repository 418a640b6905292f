package io.spillway.app.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * HTTP/2 with prior knowledge on a plain socket, every frame written by hand, for what no real
 * client sends: a zero {@code WINDOW_UPDATE}, bodies that never end, resets in bulk, a client that
 * only PINGs. Request headers are HPACK literals (no table, no Huffman), written here byte by byte;
 * the server's answers are decoded with Netty's HPACK decoder. A reader thread records every frame
 * the server sends ({@link #frames}) and acknowledges its SETTINGS.
 */
public final class RawH2 implements AutoCloseable {
  public static final int DATA = 0;
  public static final int HEADERS = 1;
  public static final int RST_STREAM = 3;
  public static final int SETTINGS = 4;
  public static final int PING = 6;
  public static final int GOAWAY = 7;
  public static final int WINDOW_UPDATE = 8;
  public static final int END_STREAM = 0x1;
  public static final int END_HEADERS = 0x4;
  public static final long CANCEL = 0x8;
  public static final long ENHANCE_YOUR_CALM = 0xb;

  /** One frame from the server; {@code headers} is set on HEADERS frames. */
  public record Frame(int type, int flags, int streamId, byte[] payload, Http2Headers headers) {
    /** The error code of a RST_STREAM or GOAWAY frame. */
    public long errorCode() {
      int at = type == GOAWAY ? 4 : 0;
      return ((payload[at] & 0xffL) << 24) | ((payload[at + 1] & 0xff) << 16) | ((payload[at + 2] & 0xff) << 8)
          | (payload[at + 3] & 0xff);
    }

    /** The {@code :status} of a HEADERS frame, or -1. */
    public int status() {
      return headers == null || headers.status() == null ? -1 : Integer.parseInt(headers.status().toString());
    }
  }

  private final Socket socket;
  private final OutputStream out;
  private final List<Frame> frames = new CopyOnWriteArrayList<>();
  private final DefaultHttp2HeadersDecoder hpack = new DefaultHttp2HeadersDecoder(false);
  private volatile boolean closed;

  public RawH2(int port) throws IOException {
    socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    out = socket.getOutputStream();
    write(frameBytes(-1, 0, 0, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
    write(frameBytes(SETTINGS, 0, 0, new byte[0]));
    Thread.ofVirtual().name("raw-h2-reader").start(this::readFrames);
  }

  /** A POST with a JSON body: HEADERS, then the body in DATA frames of at most 16 KiB. */
  public void post(int streamId, String path, String key, byte[] body, boolean endStream) throws IOException {
    headers(streamId, false, "POST", path, "authorization", "Bearer " + key,
        "content-type", "application/json", "content-length", Integer.toString(body.length));
    data(streamId, body, endStream);
  }

  public void headers(int streamId, boolean endStream, String method, String path, String... nameValues)
      throws IOException {
    ByteArrayOutputStream block = new ByteArrayOutputStream();
    literal(block, ":method", method);
    literal(block, ":scheme", "http");
    literal(block, ":path", path);
    literal(block, ":authority", "127.0.0.1");
    for (int i = 0; i < nameValues.length; i += 2) {
      literal(block, nameValues[i], nameValues[i + 1]);
    }
    write(frameBytes(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), streamId, block.toByteArray()));
  }

  public void data(int streamId, byte[] body, boolean endStream) throws IOException {
    int at = 0;
    do {
      int length = Math.min(16 * 1024, body.length - at);
      boolean last = at + length == body.length;
      byte[] piece = java.util.Arrays.copyOfRange(body, at, at + length);
      write(frameBytes(DATA, last && endStream ? END_STREAM : 0, streamId, piece));
      at += length;
    } while (at < body.length);
  }

  public void windowUpdate(int streamId, int increment) throws IOException {
    write(frameBytes(WINDOW_UPDATE, 0, streamId, int32(increment)));
  }

  public void reset(int streamId, long errorCode) throws IOException {
    write(frameBytes(RST_STREAM, 0, streamId, int32((int) errorCode)));
  }

  public void ping() throws IOException {
    write(frameBytes(PING, 0, 0, new byte[8]));
  }

  /** Every frame the server sent so far. */
  public List<Frame> frames() {
    return frames;
  }

  public Frame first(Predicate<Frame> which) {
    return frames.stream().filter(which).findFirst().orElse(null);
  }

  /** The server's HEADERS answer on a stream, or null while none came. */
  public Frame answer(int streamId) {
    return first(f -> f.type() == HEADERS && f.streamId() == streamId);
  }

  /** Whether the server closed the connection (read end of stream or a reset socket). */
  public boolean closed() {
    return closed;
  }

  /** Pings, and answers whether the connection is gone (for polling with Awaitility). */
  public boolean pingOrClosed() {
    if (closed) {
      return true;
    }
    try {
      ping();
    } catch (IOException e) {
      return true;
    }
    return closed;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  private synchronized void write(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  private void readFrames() {
    try {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      while (true) {
        int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int streamId = in.readInt() & 0x7fffffff;
        byte[] payload = new byte[length];
        in.readFully(payload);
        Http2Headers headers = null;
        if (type == HEADERS) {
          headers = decode(streamId, payload, flags);
        }
        if (type == SETTINGS && (flags & 0x1) == 0) {
          write(frameBytes(SETTINGS, 0x1, 0, new byte[0]));
        }
        frames.add(new Frame(type, flags, streamId, payload, headers));
      }
    } catch (EOFException e) {
      // the server closed
    } catch (IOException e) {
      // reset, or closed here
    } finally {
      closed = true;
    }
  }

  private Http2Headers decode(int streamId, byte[] payload, int flags) throws IOException {
    int at = 0;
    int end = payload.length;
    if ((flags & 0x8) != 0) { // PADDED
      end -= payload[0] & 0xff;
      at = 1;
    }
    if ((flags & 0x20) != 0) { // PRIORITY
      at += 5;
    }
    ByteBuf block = Unpooled.wrappedBuffer(payload, at, end - at);
    try {
      return hpack.decodeHeaders(streamId, block);
    } catch (Http2Exception e) {
      throw new IOException("undecodable HEADERS from the server", e);
    } finally {
      block.release();
    }
  }

  /** A literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2). */
  private static void literal(ByteArrayOutputStream block, String name, String value) {
    block.write(0x00);
    string(block, name.getBytes(StandardCharsets.US_ASCII));
    string(block, value.getBytes(StandardCharsets.UTF_8));
  }

  private static void string(ByteArrayOutputStream block, byte[] bytes) {
    int length = bytes.length;
    if (length < 127) {
      block.write(length);
    } else {
      block.write(127);
      length -= 127;
      while (length >= 128) {
        block.write((length & 0x7f) | 0x80);
        length >>>= 7;
      }
      block.write(length);
    }
    block.writeBytes(bytes);
  }

  private static byte[] int32(int value) {
    return new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
  }

  /** A frame's bytes; type -1 writes {@code payload} alone (the preface). */
  private static byte[] frameBytes(int type, int flags, int streamId, byte[] payload) {
    if (type < 0) {
      return payload;
    }
    byte[] frame = new byte[9 + payload.length];
    frame[0] = (byte) (payload.length >>> 16);
    frame[1] = (byte) (payload.length >>> 8);
    frame[2] = (byte) payload.length;
    frame[3] = (byte) type;
    frame[4] = (byte) flags;
    frame[5] = (byte) (streamId >>> 24);
    frame[6] = (byte) (streamId >>> 16);
    frame[7] = (byte) (streamId >>> 8);
    frame[8] = (byte) streamId;
    System.arraycopy(payload, 0, frame, 9, payload.length);
    return frame;
  }

  /** How long tests wait for the server. */
  public static final Duration PATIENCE = Duration.ofSeconds(10);
}
