package io.spillway.app.testing;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A bare HTTP/2 client (prior knowledge) on Netty's own codec, for what OkHttp hides: a small
 * flow-control window, and a stream whose body the test reads only when it says so (reading stops,
 * so no WINDOW_UPDATE goes back, and the server must hold the stream back).
 */
public final class NettyH2Client implements AutoCloseable {
  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel connection;

  public NettyH2Client(int port, int initialWindowSize) throws InterruptedException {
    connection = new Bootstrap().group(group).channel(NioSocketChannel.class)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(Http2FrameCodecBuilder.forClient()
                .initialSettings(Http2Settings.defaultSettings().initialWindowSize(initialWindowSize))
                .build());
            ch.pipeline().addLast(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
          }
        })
        .connect("127.0.0.1", port).sync().channel();
  }

  /** One request on a new stream; its body is delivered only while {@link Exchange#read} allows. */
  public Exchange post(String path, String key, String json, Consumer<String> bodyPart) throws InterruptedException {
    Exchange exchange = new Exchange(bodyPart);
    Http2StreamChannel stream = new Http2StreamChannelBootstrap(connection)
        .option(ChannelOption.AUTO_READ, false)
        .handler(new ChannelInitializer<Http2StreamChannel>() {
          @Override
          protected void initChannel(Http2StreamChannel ch) {
            ch.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(false));
            ch.pipeline().addLast(exchange.handler());
          }
        })
        .open().sync().getNow();
    exchange.stream = stream;
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    FullHttpRequest request =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path, Unpooled.wrappedBuffer(body));
    request.headers().set("host", "127.0.0.1").set("authorization", "Bearer " + key)
        .set("content-type", "application/json").set("content-length", body.length);
    stream.writeAndFlush(request).sync();
    stream.read();
    return exchange;
  }

  @Override
  public void close() {
    connection.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** One stream's answer as it arrives. */
  public static final class Exchange {
    public final CompletableFuture<Integer> status = new CompletableFuture<>();
    public final CompletableFuture<Void> ended = new CompletableFuture<>();
    private final Consumer<String> bodyPart;
    private volatile Http2StreamChannel stream;

    private Exchange(Consumer<String> bodyPart) {
      this.bodyPart = bodyPart;
    }

    /** Reads from now on, as fast as the body comes. */
    public void readAll() {
      stream.eventLoop().execute(() -> {
        stream.config().setAutoRead(true);
        stream.read();
      });
    }

    private SimpleChannelInboundHandler<HttpObject> handler() {
      return new SimpleChannelInboundHandler<>() {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
          if (msg instanceof HttpResponse response) {
            status.complete(response.status().code());
          }
          if (msg instanceof HttpContent content) {
            bodyPart.accept(content.content().toString(StandardCharsets.UTF_8));
          }
          if (msg instanceof LastHttpContent) {
            ended.complete(null);
          }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
          ended.complete(null);
        }
      };
    }
  }
}
