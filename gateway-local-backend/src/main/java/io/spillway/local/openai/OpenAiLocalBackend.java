package io.spillway.local.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.Version;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.responses.ResponseEcho;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.upstream.ControlPlaneClient;
import io.spillway.upstream.OpenAiHttpBackend;
import io.spillway.upstream.UpstreamDialect;
import io.spillway.upstream.UpstreamSettings;
import io.spillway.local.LocalReadiness;
import io.spillway.local.LocalServer;
import io.spillway.local.ModelMapping;
import io.spillway.local.TranslatedRequest;
import io.spillway.local.TranslatedStream;
import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Any OpenAI-compatible local server ({@code local.kind: openai}): vLLM, llama.cpp's
 * {@code llama-server}, Ollama's own {@code /v1}. Requests are forwarded as they are, with only the
 * model name mapped by {@code local.models} and no key at all (the company's cloud key never goes
 * to a local server).
 *
 * <p>{@code /v1/responses} is translated to {@code /v1/chat/completions} ({@link ResponsesOverChat})
 * unless {@code local.responsesApi} is {@code native}: most such servers have no Responses API, or
 * one without the tools coding agents send. That translation is a {@link io.spillway.local.Translation}
 * like the Ollama routes', and its stream ends and fails the same way ({@link TranslatedStream}).
 *
 * <p>Readiness is {@code GET /v1/models}: the server answers, and the mapped models are among the
 * ones it lists. There is no keep-warm: these servers keep the model they serve loaded. Thread-safe.
 */
public final class OpenAiLocalBackend implements LocalServer, AutoCloseable {
  public static final String NAME = BackendKind.LOCAL.tag();

  private final ModelMapping models;
  private final LocalConfig config;
  private final Clock clock;
  private final Counter dropped;
  private final UpstreamSettings settings;
  private final OkHttpClient probeClient;
  private final OpenAiHttpBackend delegate;

  /**
   * A backend that makes its data calls over {@code http}, the data path's client on the front
   * end's event loops; readiness and context questions go over OkHttp ({@link ControlPlaneClient}).
   *
   * @param cloud supplies the connect timeout and the response size limit; its key is never used
   */
  public OpenAiLocalBackend(
      LocalConfig config, CloudConfig cloud, Clock clock, MeterRegistry meters, UpstreamHttp http) {
    this.models = new ModelMapping(config);
    this.config = config;
    this.clock = clock;
    this.dropped = TranslatedRequest.droppedCounter(meters);
    this.settings = UpstreamSettings.from(config, cloud);
    this.probeClient = ControlPlaneClient.forProbes(
        ControlPlaneClient.create(settings.connectTimeout(), settings.timeout()), settings.connectTimeout());
    this.delegate = new OpenAiHttpBackend(BackendKind.LOCAL, settings, UpstreamDialect.OPENAI, http);
  }

  @Override
  public BackendKind kind() {
    return BackendKind.LOCAL;
  }

  @Override
  public String serverKind() {
    return "openai";
  }

  /**
   * The server's answer through {@link OpenAiHttpBackend#callAsync}: it completes on the event
   * loop that received it, with no thread waiting. A Responses request sent as chat completions is translated there too.
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    try {
      String requested = request.model();
      String local = models.map(requested);
      if (request.route() == Route.RESPONSES && config.responsesApi() == LocalConfig.ResponsesApi.CHAT) {
        return responsesOverChat(request, local);
      }
      if (local.equals(requested)) {
        return delegate.callAsync(request);
      }
      ObjectNode body = request.body().deepCopy();
      body.put("model", local);
      return delegate.callAsync(request.withBody(body));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletionStage<GatewayResponse> responsesOverChat(GatewayRequest request, String local) {
    ResponsesOverChat translation = new ResponsesOverChat(request.body(),
        request.attribute(ResponseEcho.KEY, ResponseEcho.NOT_STORED));
    TranslatedRequest translated = TranslatedRequest.of(translation, request, local, dropped);
    GatewayRequest chat = GatewayRequest.create(request.id(), Route.CHAT_COMPLETIONS, request.headers(),
        translated.body(), null, request.receivedAt());
    // What the call itself needs of the client's request: its disconnect (which cancels the call),
    // its connection's event loop (where the call runs) and its trace context.
    copy(request, chat, RequestAttributes.CLIENT_DISCONNECT);
    copy(request, chat, RequestAttributes.CONNECTION_LOOP);
    copy(request, chat, RequestAttributes.TRACE_CONTEXT);
    return delegate.callAsync(chat).thenApply(answer -> translatedAnswer(translation, translated, local, answer));
  }

  private GatewayResponse translatedAnswer(
      ResponsesOverChat translation, TranslatedRequest translated, String local, GatewayResponse answer) {
    long createdAt = clock.instant().getEpochSecond();
    if (!answer.isSuccessful()) {
      return translated.answered(answer);
    }
    if (answer.isStream()) {
      return translated.answered(GatewayResponse.streamed(answer.status(), answer.headers(),
          new TranslatedStream(NAME, NAME + " backend", new ChatChunks(NAME, answer.stream()),
              translation.streamTranslator(local, createdAt))));
    }
    JsonNode completion = answer.json();
    if (completion == null || !completion.isObject()) {
      throw new UpstreamException(NAME, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + NAME + " backend answered chat completions with something that is not a JSON object", null);
    }
    if (translation.stream()) {
      // The server ignored "stream": the whole answer, as the events a stream of it would have been.
      return GatewayResponse.streamed(200, translated.report(),
          new ListedEventStream(translation.answerAsEvents(completion, local, createdAt)));
    }
    ObjectNode response = translation.answer(completion, local, createdAt);
    return translated.answered(GatewayResponse.buffered(200, answer.headers().with("content-type", GatewayResponse.JSON),
        Json.toBytes(response)));
  }

  private static <T> void copy(GatewayRequest from, GatewayRequest to, Attribute<T> key) {
    to.setAttribute(key, from.attribute(key));
  }

  @Override
  public Probe probe(List<String> wanted) {
    Request request = new Request.Builder().url(settings.baseUrl() + "/models").get()
        .header("User-Agent", Version.USER_AGENT).build();
    try (Response response = probeClient.newCall(request).execute()) {
      if (!response.isSuccessful()) {
        return new Probe(true, null, List.of(), List.of("The local server answered /v1/models with HTTP "
            + response.code() + "; cannot tell which models it serves."));
      }
      Set<String> served = new HashSet<>();
      JsonNode list = Json.parse(response.body().bytes());
      for (JsonNode model : list.path("data")) {
        String id = Json.text(model, "id");
        if (id != null) {
          served.add(id);
        }
      }
      List<LocalReadiness.MissingModel> missing = new ArrayList<>();
      List<String> problems = new ArrayList<>();
      if (!served.isEmpty()) {
        for (String model : wanted) {
          if (!served.contains(model)) {
            String fix = "serve '" + model + "' on the local server, or map to one of " + served + " in local.models";
            missing.add(new LocalReadiness.MissingModel(model, fix));
            problems.add("Model '" + model + "' is not served by the local server. Fix: " + fix + ".");
          }
        }
      }
      // These servers keep what they serve loaded: a listed model is a loaded one.
      List<String> loaded = wanted.stream().filter(served::contains).toList();
      return new Probe(true, null, missing, problems, loaded);
    } catch (IOException e) {
      if (e instanceof com.fasterxml.jackson.core.JsonProcessingException) {
        return new Probe(true, null, List.of(), List.of("The local server's /v1/models answer is not JSON."));
      }
      return Probe.unreachable("Cannot reach the local OpenAI-compatible server ("
          + LocalServer.describe(e) + "). Is it running, and is local.baseUrl right?");
    }
  }

  /**
   * What the server says about its context: vLLM lists {@code max_model_len} on each model of
   * {@code GET /v1/models}; llama.cpp's {@code llama-server} answers {@code GET /props} with
   * {@code default_generation_settings.n_ctx} (the context of one slot). Empty for other servers.
   */
  @Override
  public OptionalInt contextWindow(String model) {
    JsonNode list = getJson(settings.baseUrl() + "/models");
    if (list != null) {
      for (JsonNode entry : list.path("data")) {
        JsonNode length = entry.get("max_model_len");
        if (model.equals(Json.text(entry, "id")) && length != null && length.canConvertToInt() && length.intValue() > 0) {
          return OptionalInt.of(length.intValue());
        }
      }
    }
    String base = settings.baseUrl();
    JsonNode props = getJson(base.substring(0, base.length() - "/v1".length()) + "/props");
    JsonNode nCtx = props == null ? null : props.path("default_generation_settings").get("n_ctx");
    return nCtx != null && nCtx.canConvertToInt() && nCtx.intValue() > 0
        ? OptionalInt.of(nCtx.intValue()) : OptionalInt.empty();
  }

  private JsonNode getJson(String url) {
    Request request = new Request.Builder().url(url).get().header("User-Agent", Version.USER_AGENT).build();
    try (Response response = probeClient.newCall(request).execute()) {
      return response.isSuccessful() ? Json.parse(response.body().bytes()) : null;
    } catch (IOException e) {
      return null;
    }
  }

  @Override
  public boolean keepsWarm() {
    return false;
  }

  @Override
  public void load(String model) {
    // OpenAI-compatible servers keep the model they serve loaded; there is nothing to ask for.
  }

  @Override
  public void close() {
    ControlPlaneClient.close(probeClient);
  }
}
