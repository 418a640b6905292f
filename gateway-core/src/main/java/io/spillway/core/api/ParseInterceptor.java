package io.spillway.core.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import java.util.concurrent.CompletionStage;

/**
 * The first stage of a model call after the observer: reads the body once with {@link RequestParser}
 * (content type, UTF-8, JSON, the fields Spillway relies on) and passes the parsed request on, the
 * client's exact bytes still what is forwarded. A malformed request goes no further: its error is
 * thrown to the stages before (the observer counts and logs it like any other answer). Sets
 * {@link RequestAttributes#PARSED}. Thread-safe.
 */
public final class ParseInterceptor implements Interceptor {
  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest received = chain.request();
    ObjectNode body = RequestParser.parse(received.route(), received.headers().get("content-type"),
        received.bodyBytes());
    GatewayRequest parsed = received.withParsedBody(body);
    parsed.setAttribute(RequestAttributes.PARSED, parsed);
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
