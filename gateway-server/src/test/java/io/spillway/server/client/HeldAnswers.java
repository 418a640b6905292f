package io.spillway.server.client;

import static org.awaitility.Awaitility.await;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A responder that keeps every request waiting until the test lets the answers go. */
final class HeldAnswers implements FakeUpstream.Responder {
  private final List<ChannelHandlerContext> waiting = new CopyOnWriteArrayList<>();

  @Override
  public void respond(ChannelHandlerContext ctx, FullHttpRequest request) {
    waiting.add(ctx);
  }

  void awaitRequests(int count) {
    await().until(() -> waiting.size() >= count);
  }

  /** Answers every request held so far with {@code text}. */
  void release(String text) {
    for (ChannelHandlerContext ctx : waiting) {
      ctx.writeAndFlush(FakeUpstream.full(text, false));
    }
    waiting.clear();
  }
}
