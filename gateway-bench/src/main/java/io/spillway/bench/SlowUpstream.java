package io.spillway.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A fake OpenAI upstream that streams slowly: for each request it sends one
 * {@code chat.completion.chunk} event every {@code --interval-ms} for {@code --events} events, then
 * (when the request asked with {@code include_usage}, as Spillway does) the usage chunk, then
 * {@code [DONE]}. One port speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c), told apart by the
 * HTTP/2 connection preface, so a gateway can multiplex thousands of streams on a few connections.
 * Built on Netty with a timer per stream on its event loop, so it holds tens of thousands of streams
 * on one thread.
 *
 * <pre>java -cp spillway-bench.jar io.spillway.bench.SlowUpstream --port 18950 --events 30 --interval-ms 1000
 *     [--io-threads 1] [--max-concurrent-streams 100000]</pre>
 */
public final class SlowUpstream implements AutoCloseable {
  private final EventLoopGroup loops;
  private final Channel server;

  private SlowUpstream(EventLoopGroup loops, Channel server) {
    this.loops = loops;
    this.server = server;
  }

  /** Starts listening on loopback {@code port} (0 for any free port). */
  public static SlowUpstream start(int port, SlowStreamShape shape, int ioThreads, long maxConcurrentStreams)
      throws InterruptedException {
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    EventLoopGroup loops = new MultiThreadIoEventLoopGroup(ioThreads, io);
    try {
      Channel server = new ServerBootstrap()
          .group(loops)
          .channel(channelType)
          .option(ChannelOption.SO_BACKLOG, 65535)
          .option(ChannelOption.SO_REUSEADDR, true)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel channel) {
              channel.pipeline().addLast("preface", new SlowUpstreamPreface(shape, maxConcurrentStreams));
            }
          })
          .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
          .sync()
          .channel();
      return new SlowUpstream(loops, server);
    } catch (RuntimeException | InterruptedException e) {
      loops.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  public static void main(String[] args) throws InterruptedException {
    int port = Args.intValue(args, "--port", 18950);
    SlowStreamShape shape = new SlowStreamShape(
        Args.intValue(args, "--events", 30), Duration.ofMillis(Args.intValue(args, "--interval-ms", 1000)));
    int ioThreads = Args.intValue(args, "--io-threads", 1);
    long maxStreams = Args.intValue(args, "--max-concurrent-streams", 100_000);
    SlowUpstream upstream = start(port, shape, ioThreads, maxStreams);
    System.out.println("slow upstream on 127.0.0.1:" + upstream.port() + " (HTTP/1.1 and h2c), " + shape.events()
        + " events " + shape.interval().toMillis() + " ms apart");
    upstream.server.closeFuture().sync();
  }
}
