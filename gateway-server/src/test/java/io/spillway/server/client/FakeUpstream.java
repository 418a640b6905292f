package io.spillway.server.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small upstream on a loopback ephemeral port, on Netty: HTTP/1.1, h2c with prior knowledge, or
 * TLS offering a chosen list of ALPN protocols. Each request (HTTP/1.1 or one HTTP/2 stream, both
 * seen as HTTP/1.1-shaped messages) goes to the test's {@link Responder}; the server counts what the
 * client did to it: connections accepted and closed, requests, streams reset.
 */
final class FakeUpstream implements AutoCloseable {
  /** Answers one request; {@code ctx} is the connection's (HTTP/1.1) or the stream's (HTTP/2). */
  @FunctionalInterface
  interface Responder {
    void respond(ChannelHandlerContext ctx, FullHttpRequest request);
  }

  final AtomicInteger accepted = new AtomicInteger();
  final AtomicInteger closed = new AtomicInteger();
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger streamsReset = new AtomicInteger();
  /** Server-side connections (parents, for HTTP/2), in the order accepted. */
  final List<Channel> connections = new CopyOnWriteArrayList<>();
  final List<String> protocols = new CopyOnWriteArrayList<>();
  volatile Responder responder;
  /** How many of the next connections are closed as soon as accepted, before any TLS or HTTP. */
  final AtomicInteger dropNext = new AtomicInteger();
  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel server;
  private final String scheme;

  private FakeUpstream(Responder responder, SslContext tls, boolean h2c, int sendBuffer) {
    this.responder = responder;
    this.scheme = tls != null ? "https" : "http";
    ServerBootstrap bootstrap = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel channel) {
            accepted.incrementAndGet();
            connections.add(channel);
            channel.closeFuture().addListener(f -> closed.incrementAndGet());
            if (dropNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
              channel.close();
              return;
            }
            if (tls != null) {
              channel.pipeline().addLast(tls.newHandler(channel.alloc()), new ApplicationProtocolNegotiationHandler(
                  ApplicationProtocolNames.HTTP_1_1) {
                @Override
                protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
                  if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                    http2(ctx.pipeline());
                  } else {
                    http1(ctx.pipeline());
                  }
                }
              });
            } else if (h2c) {
              http2(channel.pipeline());
            } else {
              http1(channel.pipeline());
            }
          }
        });
    if (sendBuffer > 0) {
      bootstrap.childOption(ChannelOption.SO_SNDBUF, sendBuffer);
    }
    server = bootstrap.bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
  }

  static FakeUpstream http1(Responder responder) {
    return new FakeUpstream(responder, null, false, 0);
  }

  /** HTTP/1.1 whose connections keep at most {@code sendBuffer} bytes in the kernel. */
  static FakeUpstream http1(Responder responder, int sendBuffer) {
    return new FakeUpstream(responder, null, false, sendBuffer);
  }

  static FakeUpstream h2c(Responder responder) {
    return new FakeUpstream(responder, null, true, 0);
  }

  /** TLS with {@code certificate}, offering {@code alpn} (e.g. h2 and http/1.1, or http/1.1 alone). */
  static FakeUpstream tls(TestCertificate certificate, Responder responder, String... alpn) throws Exception {
    SslContext context = SslContextBuilder.forServer(certificate.keyManagers())
        .applicationProtocolConfig(new ApplicationProtocolConfig(
            ApplicationProtocolConfig.Protocol.ALPN,
            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
            alpn))
        .build();
    return new FakeUpstream(responder, context, false, 0);
  }

  URI uri(String path) {
    return URI.create(scheme + "://localhost:" + ((InetSocketAddress) server.localAddress()).getPort() + path);
  }

  int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  private void http1(ChannelPipeline pipeline) {
    protocols.add("http/1.1");
    pipeline.addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20), new Requests());
  }

  private void http2(ChannelPipeline pipeline) {
    protocols.add("h2");
    pipeline.addLast(Http2FrameCodecBuilder.forServer().build(), new Http2MultiplexHandler(
        new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel stream) {
            stream.pipeline().addLast(new ResetCounter(), new Http2StreamFrameToHttpObjectCodec(true),
                new HttpObjectAggregator(1 << 20), new Requests());
          }
        }));
  }

  private final class Requests extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      requests.incrementAndGet();
      responder.respond(ctx, request);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  private final class ResetCounter extends ChannelInboundHandlerAdapter {
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
      if (event instanceof Http2ResetFrame) {
        streamsReset.incrementAndGet();
      }
      super.userEventTriggered(ctx, event);
    }
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  // ---- answers -------------------------------------------------------------------------------

  static Responder ok(String text) {
    return (ctx, request) -> ctx.writeAndFlush(full(text, false));
  }

  /** Answers and says the connection ends ({@code Connection: close}), closing it after the answer. */
  static Responder okThenClose(String text) {
    return (ctx, request) -> ctx.writeAndFlush(full(text, true)).addListener(f -> ctx.close());
  }

  /** Reads the request and never answers. */
  static Responder silent() {
    return (ctx, request) -> {};
  }

  /** Sends the head at once, then nothing more. */
  static Responder headOnly() {
    return (ctx, request) -> {
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      ctx.writeAndFlush(head);
      ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("part", StandardCharsets.UTF_8)));
    };
  }

  static FullHttpResponse full(String text, boolean close) {
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
        Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
    if (close) {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    return response;
  }

  /**
   * Streams {@code total} bytes in chunks of {@code chunk}, one write in flight at a time: the next
   * goes only once the last was taken by the transport (the kernel's send buffer, or the HTTP/2
   * stream's window), so {@code sent} counts what the client has let through.
   */
  static Responder stream(long total, int chunk, AtomicLong sent) {
    return (ctx, request) -> {
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      ctx.writeAndFlush(head);
      writeNext(ctx, total, chunk, sent);
    };
  }

  private static void writeNext(ChannelHandlerContext ctx, long left, int chunk, AtomicLong sent) {
    if (left <= 0) {
      ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
      return;
    }
    int size = (int) Math.min(chunk, left);
    ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[size]))).addListener(written -> {
      if (written.isSuccess()) {
        sent.addAndGet(size);
        writeNext(ctx, left - size, chunk, sent);
      }
    });
  }
}
