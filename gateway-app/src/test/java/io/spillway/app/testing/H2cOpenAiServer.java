package io.spillway.app.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An OpenAI-compatible local server (vLLM behind an h2c proxy, say) on a loopback port that speaks
 * HTTP/2 with prior knowledge and HTTP/1.1 on the same port, telling them apart by the HTTP/2
 * connection preface. Lists {@code models} on {@code GET /v1/models} and answers chat completions,
 * streamed or not, with "Hello over h2c". Records each request's protocol and connection.
 */
public final class H2cOpenAiServer implements AutoCloseable {
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  public static final String TEXT = "Hello over h2c";

  /** One request as the server saw it: {@code h2} or {@code http/1.1}, the path, the connection (from 1). */
  public record Seen(String protocol, String method, String path, int connection) {}

  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final AtomicInteger connections = new AtomicInteger();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final String[] models;
  private final Channel server;

  public H2cOpenAiServer(String... models) {
    this.models = models;
    server = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel channel) {
            channel.pipeline().addLast(new Sniff(connections.incrementAndGet()));
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0))
        .syncUninterruptibly()
        .channel();
  }

  /** The OpenAI-style base URL, ending in {@code /v1}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort() + "/v1";
  }

  public List<Seen> seen() {
    return List.copyOf(seen);
  }

  /** The chat completion requests seen, in order. */
  public List<Seen> chats() {
    return seen.stream().filter(s -> s.path().endsWith("/chat/completions")).toList();
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Looks at a connection's first bytes: the HTTP/2 preface sets it up for h2c, anything else for HTTP/1.1. */
  private final class Sniff extends ByteToMessageDecoder {
    private final int connection;

    Sniff(int connection) {
      this.connection = connection;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      int looked = Math.min(in.readableBytes(), PREFACE.length);
      boolean h2 = true;
      for (int i = 0; i < looked && h2; i++) {
        h2 = in.getByte(in.readerIndex() + i) == PREFACE[i];
      }
      if (h2 && looked < PREFACE.length) {
        return; // not enough yet to tell
      }
      if (h2) {
        Http2FrameCodec codec = Http2FrameCodecBuilder.forServer().build();
        ctx.pipeline().addAfter(ctx.name(), null, codec);
        ctx.pipeline().addAfter(ctx.pipeline().context(codec).name(), null, new Http2MultiplexHandler(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(Channel stream) {
                stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true),
                    new HttpObjectAggregator(1 << 20), new Answers("h2", connection));
              }
            }));
      } else {
        ctx.pipeline().addAfter(ctx.name(), null, new Answers("http/1.1", connection));
        ctx.pipeline().addAfter(ctx.name(), null, new HttpObjectAggregator(1 << 20));
        ctx.pipeline().addAfter(ctx.name(), null, new HttpServerCodec());
      }
      ctx.pipeline().remove(this); // hands what it holds to the handlers just added
    }
  }

  private final class Answers extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final String protocol;
    private final int connection;

    Answers(String protocol, int connection) {
      this.protocol = protocol;
      this.connection = connection;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      String path = request.uri();
      seen.add(new Seen(protocol, request.method().name(), path, connection));
      String body = request.content().toString(StandardCharsets.UTF_8);
      if (path.endsWith("/models")) {
        StringBuilder data = new StringBuilder();
        for (String model : models) {
          data.append(data.isEmpty() ? "" : ",").append("{\"id\":").append(OpenAiStubs.quote(model))
              .append(",\"object\":\"model\"}");
        }
        ctx.writeAndFlush(answer(200, "application/json", "{\"object\":\"list\",\"data\":[" + data + "]}"));
      } else if (path.endsWith("/chat/completions")) {
        boolean stream = body.replace(" ", "").contains("\"stream\":true");
        ctx.writeAndFlush(stream
            ? answer(200, "text/event-stream", OpenAiStubs.chatStreamBody(true, "Hello", " over h2c"))
            : answer(200, "application/json", OpenAiStubs.chatCompletionBody(TEXT, 5, 3)));
      } else {
        ctx.writeAndFlush(answer(404, "application/json", "{\"error\":{\"message\":\"no such path\"}}"));
      }
    }

    private static FullHttpResponse answer(int status, String contentType, String body) {
      FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
          Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
      response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
      return response;
    }
  }
}
