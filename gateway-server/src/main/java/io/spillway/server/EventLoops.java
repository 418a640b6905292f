package io.spillway.server;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The event loops the front end and the upstream client share: one acceptor, and one worker loop
 * per core (unless {@code -Dio.netty.eventLoopThreads} says otherwise). A client connection and the
 * upstream connections of its requests live on the same worker, so a request crosses no thread
 * between the two sockets. Netty's own default (two loops per core) suits servers whose loops do
 * all the work; fewer, busier loops need fewer sleeping loops woken (docs/performance.md).
 */
public final class EventLoops implements AutoCloseable {
  private final boolean epoll;
  private final EventLoopGroup acceptor;
  private final EventLoopGroup workers;

  public EventLoops() {
    this(Integer.getInteger("io.netty.eventLoopThreads", Runtime.getRuntime().availableProcessors()));
  }

  public EventLoops(int workerThreads) {
    epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    acceptor = new MultiThreadIoEventLoopGroup(1, io);
    workers = new MultiThreadIoEventLoopGroup(workerThreads, io);
  }

  public boolean epoll() {
    return epoll;
  }

  EventLoopGroup acceptor() {
    return acceptor;
  }

  /** The worker loops: client connections, and the upstream connections of their requests. */
  public EventLoopGroup workers() {
    return workers;
  }

  Class<? extends ServerChannel> serverChannelType() {
    return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  public Class<? extends SocketChannel> socketChannelType() {
    return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** Stops the loops, waiting up to a second for tasks already queued. */
  @Override
  public void close() {
    acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
