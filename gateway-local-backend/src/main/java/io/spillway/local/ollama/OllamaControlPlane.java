package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.Via;
import io.spillway.core.json.Json;
import io.spillway.local.LocalReadiness;
import io.spillway.local.LocalServer;
import io.spillway.upstream.ControlPlaneClient;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ollama's control plane, over OkHttp ({@link ControlPlaneClient}), off the request path: the probe
 * ({@code /api/version}, {@code /api/tags}, {@code /api/ps}), keep-warm loads (an empty
 * {@code /api/generate} with {@code keep_alive}, or an empty {@code /api/embed} for an embedding-only
 * model) and the model's context window ({@code /api/show}).
 * Probes and model questions use the short-timeout probe client; loads may take as long as
 * {@code local.timeout}. Thread-safe.
 */
final class OllamaControlPlane implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(OllamaControlPlane.class);
  private static final MediaType JSON = MediaType.get("application/json");

  private final LocalConfig config;
  private final long maxResponseBytes;
  private final String keepAlive;
  /** Keep-warm loads. */
  private final OkHttpClient client;
  /** Probes and model questions. */
  private final OkHttpClient probeClient;
  /** Local models that refused {@code /api/generate}: keep-warm loads them through {@code /api/embed}. */
  private final Set<String> embeddingOnly = ConcurrentHashMap.newKeySet();
  /** Whether the last probe found Ollama's own {@code /v1/messages} (Ollama 0.14 and later). */
  private volatile boolean servesMessages;

  OllamaControlPlane(LocalConfig config, CloudConfig cloud, String keepAlive) {
    this.config = config;
    this.maxResponseBytes = cloud.maxResponseSize().bytes();
    this.keepAlive = keepAlive;
    this.client = ControlPlaneClient.create(cloud.connectTimeout(), config.timeout());
    this.probeClient = ControlPlaneClient.forProbes(client, cloud.connectTimeout());
  }

  /**
   * Loads {@code model} with {@code options.num_ctx} = {@code contextTokens} (none when 0). An
   * embedding-only model refuses {@code /api/generate} ("does not support generate"): it is loaded
   * with an empty {@code /api/embed} instead, and every later round goes there straight away.
   */
  void load(String model, int contextTokens) {
    if (embeddingOnly.contains(model)) {
      loadForEmbeddings(model);
      return;
    }
    ObjectNode body = Json.object();
    body.put("model", model);
    body.put("prompt", "");
    body.put("stream", false);
    body.put("keep_alive", keepAlive);
    if (contextTokens > 0) {
      body.putObject("options").put("num_ctx", contextTokens);
    }
    String refusal = loadCall("/api/generate", body, model);
    if (refusal != null && OllamaErrors.refusesGeneration(refusal)) {
      log.info("local model {} is an embedding model: keep-warm loads it through /api/embed", model);
      embeddingOnly.add(model);
      loadForEmbeddings(model);
    } else if (refusal != null) {
      throw OllamaErrors.from(400, refusal, model, model, null);
    }
  }

  /** Loads an embedding model with an {@code /api/embed} of no text, which embeds nothing. */
  private void loadForEmbeddings(String model) {
    ObjectNode body = Json.object();
    body.put("model", model);
    body.put("input", "");
    body.put("keep_alive", keepAlive);
    String refusal = loadCall("/api/embed", body, model);
    if (refusal != null) {
      throw OllamaErrors.from(400, refusal, model, model, null);
    }
  }

  /**
   * Posts a load request: null when it succeeded, the error text of a 400 answer (which the caller
   * judges); any other failure is thrown.
   */
  private String loadCall(String path, ObjectNode body, String model) {
    Call call = client.newCall(post(path, body, Via.OWN));
    call.timeout().timeout(config.timeout().toMillis(), TimeUnit.MILLISECONDS);
    try (Response response = call.execute()) {
      if (response.isSuccessful()) {
        return null;
      }
      byte[] answer = read(response);
      if (response.code() == 400) {
        String message = OllamaWire.errorMessage(() -> answer);
        return message == null ? "HTTP 400" : message;
      }
      throw OllamaWire.error(response.code(), () -> answer, response.header("retry-after"), model, model);
    } catch (IOException e) {
      throw UpstreamFailures.beforeResponse(OllamaWire.NAME, e);
    }
  }

  LocalServer.Probe probe(List<String> wanted) {
    String version;
    List<String> problems = new ArrayList<>();
    try (Response response = probeClient.newCall(get("/api/version")).execute()) {
      if (response.isSuccessful()) {
        version = Json.text(OllamaWire.parse(read(response)), "version");
      } else {
        version = null;
        problems.add("The local server answered /api/version with HTTP " + response.code()
            + ": is local.baseUrl an Ollama server? (Use local.kind: openai for OpenAI-compatible servers.)");
      }
    } catch (IOException e) {
      log.debug("probing the Ollama server at {} failed", config.baseUrl(), e);
      return LocalServer.Probe.unreachable("Cannot reach the Ollama server (" + LocalServer.describe(e)
          + "). Is `ollama serve` running there, and is local.baseUrl right?");
    } catch (UpstreamException e) {
      version = null;
      problems.add("The local server's /api/version answer is not Ollama's: " + e.getMessage());
    }

    Set<String> available = null;
    try (Response response = probeClient.newCall(get("/api/tags")).execute()) {
      if (response.isSuccessful()) {
        available = modelNames(OllamaWire.parse(read(response)));
      } else {
        problems.add("The local server answered /api/tags with HTTP " + response.code()
            + "; cannot tell which models it has.");
      }
    } catch (IOException | UpstreamException e) {
      log.debug("listing the Ollama server's models failed", e);
      problems.add("Could not list the local server's models (/api/tags): " + LocalServer.describe(e));
    }

    List<LocalReadiness.MissingModel> missing = new ArrayList<>();
    if (available != null) {
      for (String model : wanted) {
        if (!available.contains(normalize(model))) {
          String fix = "ollama pull " + model;
          missing.add(new LocalReadiness.MissingModel(model, fix));
          problems.add("Model '" + model + "' is not on the Ollama server. Fix: run `" + fix + "` on that host.");
        }
      }
    }
    servesMessages = probeMessages();
    return new LocalServer.Probe(true, version, missing, problems, running(wanted));
  }

  /** Whether the last probe found that the server answers Anthropic's Messages API itself. */
  boolean servesMessages() {
    return servesMessages;
  }

  /**
   * Asks {@code POST /v1/messages} a request with no model, which Ollama's Messages endpoint (0.14
   * and later) refuses before it loads anything: {@code 400} with an Anthropic-shaped error body
   * ({@code "type":"error"}). An older server has no such route and answers 404. Nothing is loaded
   * and nothing generated either way.
   */
  private boolean probeMessages() {
    ObjectNode ask = Json.object();
    ask.put("model", "");
    ask.put("max_tokens", 1);
    ask.putArray("messages");
    try (Response response = probeClient.newCall(post("/v1/messages", ask, null)).execute()) {
      if (response.code() != 400) {
        return false;
      }
      return "error".equals(Json.text(OllamaWire.parse(read(response)), "type"));
    } catch (IOException | UpstreamException e) {
      log.debug("asking the Ollama server whether it serves /v1/messages failed", e);
      return false;
    }
  }

  /**
   * Which of {@code wanted} are loaded in memory now: Ollama's {@code GET /api/ps} lists the running
   * models ({@code models[].name} / {@code .model}). Empty when it cannot tell.
   */
  private List<String> running(List<String> wanted) {
    Set<String> running;
    try (Response response = probeClient.newCall(get("/api/ps")).execute()) {
      if (!response.isSuccessful()) {
        return List.of();
      }
      running = modelNames(OllamaWire.parse(read(response)));
    } catch (IOException | UpstreamException e) {
      log.debug("listing the Ollama server's running models failed", e);
      return List.of();
    }
    return wanted.stream().filter(model -> running.contains(normalize(model))).toList();
  }

  /** The normalized names of an answer's {@code models[]} ({@code name} and {@code model} of each). */
  private static Set<String> modelNames(JsonNode answer) {
    Set<String> names = new HashSet<>();
    for (JsonNode model : answer.path("models")) {
      for (String field : List.of("name", "model")) {
        String name = Json.text(model, field);
        if (name != null) {
          names.add(normalize(name));
        }
      }
    }
    return names;
  }

  /**
   * The model's trained context window from {@code POST /api/show}: {@code model_info} holds it as
   * {@code <architecture>.context_length}, the architecture being {@code general.architecture}.
   */
  OptionalInt contextWindow(String model) {
    ObjectNode ask = Json.object();
    ask.put("model", model);
    try (Response response = probeClient.newCall(post("/api/show", ask, null)).execute()) {
      if (!response.isSuccessful()) {
        log.debug("Ollama's /api/show answered HTTP {} for {}", response.code(), model);
        return OptionalInt.empty();
      }
      return contextLength(OllamaWire.parse(read(response)).path("model_info"));
    } catch (IOException | UpstreamException e) {
      log.debug("asking Ollama for the context window of {} failed", model, e);
      return OptionalInt.empty();
    }
  }

  /** {@code <general.architecture>.context_length}, else the one key ending in {@code .context_length}. */
  static OptionalInt contextLength(JsonNode modelInfo) {
    String architecture = Json.text(modelInfo, "general.architecture");
    JsonNode length = architecture != null ? modelInfo.get(architecture + ".context_length") : null;
    if (length == null) {
      Iterator<Map.Entry<String, JsonNode>> fields = modelInfo.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        if (field.getKey().endsWith(".context_length")) {
          length = field.getValue();
          break;
        }
      }
    }
    return length != null && length.canConvertToInt() && length.intValue() > 0
        ? OptionalInt.of(length.intValue()) : OptionalInt.empty();
  }

  /** Ollama names without a tag mean {@code :latest}. */
  static String normalize(String model) {
    int slash = model.lastIndexOf('/');
    return model.indexOf(':', slash + 1) < 0 ? model + ":latest" : model;
  }

  private byte[] read(Response response) {
    return OllamaWire.readBounded(response.body().byteStream(), maxResponseBytes);
  }

  private Request post(String path, ObjectNode body, String via) {
    Request.Builder builder = new Request.Builder().url(config.baseUrl() + path)
        .post(RequestBody.create(Json.toBytes(body), JSON));
    OllamaWire.headers(false, null, via, null).forEach(builder::header);
    return builder.build();
  }

  private Request get(String path) {
    Request.Builder builder = new Request.Builder().url(config.baseUrl() + path).get();
    OllamaWire.headers(false, null, null, null).forEach(builder::header);
    return builder.build();
  }

  @Override
  public void close() {
    ControlPlaneClient.close(client);
  }
}
