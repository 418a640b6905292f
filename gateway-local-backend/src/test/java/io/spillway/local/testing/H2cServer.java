package io.spillway.local.testing;

import io.netty.bootstrap.ServerBootstrap;
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
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * A plain-HTTP server that speaks HTTP/2 with prior knowledge only (h2c, as vLLM behind an h2c
 * proxy does), answering each request with what {@code answer} says for its path and body. A client that
 * speaks HTTP/1.1 to it gets nothing. Keeps the paths of the requests it served.
 */
public final class H2cServer implements AutoCloseable {
  /** An answer: status, content type and body. */
  public record Answer(int status, String contentType, String body) {}

  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final List<String> paths = new CopyOnWriteArrayList<>();
  private final Channel channel;

  public H2cServer(BiFunction<String, String, Answer> answer) {
    channel = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel connection) {
            connection.pipeline().addLast(Http2FrameCodecBuilder.forServer().build());
            connection.pipeline().addLast(new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
              @Override
              protected void initChannel(Http2StreamChannel stream) {
                stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true));
                stream.pipeline().addLast(new HttpObjectAggregator(1024 * 1024));
                stream.pipeline().addLast(new Responder(answer));
              }
            }));
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0))
        .syncUninterruptibly()
        .channel();
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The paths of the requests served, in order. */
  public List<String> paths() {
    return List.copyOf(paths);
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Responder extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final BiFunction<String, String, Answer> answer;

    Responder(BiFunction<String, String, Answer> answer) {
      this.answer = answer;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      paths.add(request.uri());
      Answer out = answer.apply(request.uri(), request.content().toString(StandardCharsets.UTF_8));
      FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
          HttpResponseStatus.valueOf(out.status()), Unpooled.copiedBuffer(out.body(), StandardCharsets.UTF_8));
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, out.contentType());
      response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
      ctx.writeAndFlush(response);
    }
  }
}
