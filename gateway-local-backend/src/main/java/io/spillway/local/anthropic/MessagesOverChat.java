package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.DroppedParams;
import io.spillway.local.TranslatedStream;
import io.spillway.local.Unsupported;
import io.spillway.local.openai.ChatChunks;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Anthropic's Messages API on a local server, served as chat completions, which every local server
 * kind speaks: the request written by {@link MessagesAsChat}, sent as a chat completions call of
 * the same request (its outcome, disconnect, event loop and trace context shared), so model mapping
 * ({@code local.models}, keyed by Claude model names as by any other), context fitting and the
 * server's own translation (Ollama's {@code /api/chat}) apply exactly as for a chat client; the
 * answer told back as a {@code message} ({@link ChatAsMessage}) or Anthropic's event stream
 * ({@link MessageEvents}). What was left out is named in {@code x-spillway-dropped-params} together
 * with anything the chat call itself left out. A request with a part local cannot serve is refused
 * as a whole ({@code unsupported_on_local}, naming the Messages API). Stateless.
 */
public final class MessagesOverChat {
  static final String API = "Messages API";
  private static final String BACKEND = "local";

  private MessagesOverChat() {}

  /**
   * The answer to the Messages request {@code request}, through {@code chat}, which answers chat
   * completions requests.
   *
   * @param dropped counts requests served with something left out
   */
  public static CompletionStage<GatewayResponse> call(GatewayRequest request,
      Function<GatewayRequest, CompletionStage<GatewayResponse>> chat, Counter dropped) {
    MessagesAsChat translation = new MessagesAsChat(request.body());
    Unsupported unsupported = new Unsupported();
    ObjectNode body = translation.request(unsupported);
    return call(request, translation, body, unsupported, chat, dropped);
  }

  /** As {@link #call(GatewayRequest, Function, Counter)}, with the translation already made. */
  static CompletionStage<GatewayResponse> call(GatewayRequest request, MessagesAsChat translation, ObjectNode body,
      Unsupported unsupported, Function<GatewayRequest, CompletionStage<GatewayResponse>> chat, Counter dropped) {
    try {
      unsupported.throwIfAny(API);
    } catch (RuntimeException e) {
      return java.util.concurrent.CompletableFuture.failedFuture(e);
    }
    if (!translation.dropped().isEmpty()) {
      dropped.increment();
    }
    String model = request.model();
    return chat.apply(request.asRoute(Route.CHAT_COMPLETIONS, body)).handle((answer, failure) -> {
      if (failure == null) {
        return answered(request, translation, model, answer);
      }
      Throwable cause = Blocking.cause(failure);
      if (cause instanceof UnsupportedOnLocalException refusal) {
        // Refused on the chat side (the context does not fit): named for the API the client called.
        throw new UnsupportedOnLocalException(refusal.parts(), API, refusal.param(), refusal.remedy());
      }
      throw Blocking.rethrow(cause);
    });
  }

  private static GatewayResponse answered(GatewayRequest request, MessagesAsChat translation, String model,
      GatewayResponse answer) {
    Headers report = report(request, translation.dropped(), answer.headers());
    if (!answer.isSuccessful()) {
      return withReport(answer, report);
    }
    if (answer.isStream()) {
      return withReport(GatewayResponse.streamed(answer.status(), answer.headers(), new TranslatedStream(BACKEND,
          "local backend", new ChatChunks(BACKEND, answer.stream()), new MessageEvents(model))), report);
    }
    JsonNode completion = answer.json();
    if (completion == null || !completion.isObject()) {
      throw new UpstreamException(BACKEND, UpstreamException.Failure.INVALID_RESPONSE,
          "The local backend answered chat completions with something that is not a JSON object", null);
    }
    if (translation.stream()) {
      // The server ignored "stream": the whole answer as the events a stream of it would have been.
      return withReport(GatewayResponse.streamed(200, answer.headers(), new ListedEventStream(asEvents(completion,
          model))), report);
    }
    return withReport(GatewayResponse.buffered(200, answer.headers().with("content-type", GatewayResponse.JSON),
        Json.toBytes(ChatAsMessage.of(completion, model))), report);
  }

  /** A whole {@code chat.completion} as the Messages stream telling it. */
  static List<SseEvent> asEvents(JsonNode completion, String model) {
    MessageEvents events = new MessageEvents(model);
    ObjectNode chunk = Json.object();
    chunk.put("model", ChatAsMessage.servedModel(completion, model));
    ObjectNode choice = chunk.putArray("choices").addObject();
    JsonNode message = completion.path("choices").path(0).path("message");
    ObjectNode delta = choice.putObject("delta");
    if (message.path("content").isTextual()) {
      delta.put("content", message.get("content").asText());
    }
    int index = 0;
    for (JsonNode call : message.path("tool_calls")) {
      ObjectNode indexed = call.deepCopy();
      indexed.put("index", index++);
      delta.withArray("tool_calls").add(indexed);
    }
    choice.set("finish_reason", completion.path("choices").path(0).get("finish_reason"));
    List<SseEvent> all = new ArrayList<>(events.line(chunk));
    all.addAll(events.end(Json.object().set("usage", completion.get("usage"))));
    return all;
  }

  /**
   * What both translations left out: the Messages translation's, then the chat call's own (from its
   * answer's header), said once on the outcome and in the header.
   */
  private static Headers report(GatewayRequest request, List<String> ours, Headers answer) {
    Set<String> all = new LinkedHashSet<>(ours);
    String theirs = answer.get(DroppedParams.HEADER);
    if (theirs != null) {
      for (String name : theirs.split(",")) {
        if (!name.isBlank()) {
          all.add(name.strip());
        }
      }
    }
    if (all.isEmpty()) {
      return Headers.EMPTY;
    }
    return DroppedParams.report(request, List.copyOf(all));
  }

  private static GatewayResponse withReport(GatewayResponse response, Headers report) {
    if (report == Headers.EMPTY) {
      return response;
    }
    Headers.Builder headers = response.headers().toBuilder();
    report.forEach(headers::set);
    return response.withHeaders(headers.build());
  }
}
