package io.spillway.core.api;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.PromptPieces;
import io.spillway.core.tokens.TokenCounter;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The first stage of a model call after the observer: reads the body once with {@link RequestParser}
 * (content type, UTF-8, JSON, the fields Spillway relies on) and passes the parsed request on, the
 * client's exact bytes still what is forwarded. The items of the body's top-level arrays that a
 * recent request sent byte for byte come from {@link PromptPieces}, already parsed and keyed. A
 * malformed request goes no further: its error is thrown to the stages before (the observer counts
 * and logs it like any other answer). Sets
 * {@link RequestAttributes#PARSED}. Thread-safe.
 *
 * <p>The stages after it count the prompt's tokens, and in a fresh JVM the first count waits for
 * the tokenizer's vocabulary (about a second of CPU, loaded after the listener is up). Waiting for
 * it on an event loop, on the vocabulary's class initialization, would hold every connection of
 * that loop (open streams, health checks) for the whole load. So while it is loading, a request
 * that came through a connection ({@link RequestAttributes#CONNECTION_LOOP}) goes on when the load
 * completes, on its connection's loop, and holds no thread meanwhile.
 */
public final class ParseInterceptor implements Interceptor {
  private final PromptPieces pieces;
  private final BooleanSupplier vocabularyLoaded;
  private final Supplier<CompletionStage<Void>> whenVocabularyLoaded;

  /** A parse stage that parses every body whole (no pieces remembered). */
  public ParseInterceptor() {
    this(PromptPieces.off());
  }

  /** A parse stage that takes the pieces recent requests repeat from {@code pieces}. */
  public ParseInterceptor(PromptPieces pieces) {
    this(pieces, TokenCounter::vocabularyLoaded, TokenCounter::whenVocabularyLoaded);
  }

  ParseInterceptor(PromptPieces pieces, BooleanSupplier vocabularyLoaded,
      Supplier<CompletionStage<Void>> whenVocabularyLoaded) {
    this.pieces = pieces;
    this.vocabularyLoaded = vocabularyLoaded;
    this.whenVocabularyLoaded = whenVocabularyLoaded;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest received = chain.request();
    BodyReader.Read read = RequestParser.read(received.route(), received.headers().get("content-type"),
        received.bodyBytes(), pieces);
    GatewayRequest parsed = received.withParsedBody(read.body());
    parsed.setAttribute(RequestAttributes.PARSED, parsed);
    if (!read.pieces().isEmpty()) {
      PromptKeys.of(parsed).take(read.pieces());
    }
    Executor loop = parsed.attribute(RequestAttributes.CONNECTION_LOOP);
    if (loop != null && !vocabularyLoaded.getAsBoolean()) {
      return whenVocabularyLoaded.get().thenComposeAsync(loaded -> chain.proceed(parsed), loop);
    }
    return chain.proceed(parsed);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "ParseInterceptor";
  }
}
