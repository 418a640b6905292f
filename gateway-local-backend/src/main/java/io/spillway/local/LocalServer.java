package io.spillway.local;

import io.spillway.core.pipeline.Backend;
import java.util.List;
import java.util.OptionalInt;

/**
 * One kind of local model server ({@code local.kind}): serves requests, and can be probed for
 * readiness and asked to load a model. {@link LocalBackend} adds the schedule and the readiness
 * snapshot on top. Implementations are thread-safe.
 */
public interface LocalServer extends Backend {
  /** {@code ollama} or {@code openai}: the server's {@code local.kind}. */
  String serverKind();

  /**
   * Checks that the server answers and which of {@code models} it lacks. Never throws: an
   * unreachable server is a probe result like any other.
   */
  Probe probe(List<String> models);

  /** Whether {@link #load} does anything for this kind of server. */
  boolean keepsWarm();

  /**
   * Loads {@code model} and keeps it loaded for {@code local.keepAlive}; blocks until the server
   * answered. Throws {@link io.spillway.core.error.GatewayException} when it could not.
   */
  void load(String model);

  /**
   * As {@link #load(String)}, with the context size ({@code num_ctx}) requests will use: Ollama
   * reloads a model whose context size changes, so a load at another size than the traffic's would
   * cost a reload on the next request. The default ignores the size.
   */
  default void load(String model, int contextTokens) {
    load(model);
  }

  /**
   * Asks the server for {@code model}'s context window in tokens; blocks. Empty when this kind of
   * server cannot tell or the question failed (then {@code local.context.defaultTokens} applies).
   * Never throws.
   */
  default OptionalInt contextWindow(String model) {
    return OptionalInt.empty();
  }

  /**
   * Whether the server answers Anthropic's Messages API itself ({@code POST /v1/messages}), as its
   * last probe found. The default: no.
   */
  default boolean servesMessages() {
    return false;
  }

  /**
   * What went wrong, for a probe problem. Not the exception's message: that names the server's
   * address, and the readiness snapshot is shown on {@code /readyz}, which needs no token.
   */
  static String describe(Exception e) {
    if (e instanceof java.net.ConnectException) {
      return "connection refused";
    }
    if (e instanceof java.net.SocketTimeoutException || e instanceof java.io.InterruptedIOException) {
      return "no answer in time";
    }
    if (e instanceof java.net.UnknownHostException) {
      return "unknown host";
    }
    return e.getClass().getSimpleName();
  }

  /**
   * What a probe found.
   *
   * @param version the server's version, or null when it did not say
   * @param missing the asked-for models the server does not have, each with its fix
   * @param problems what is wrong, in sentences an operator can act on
   * @param loaded the asked-for models the server has loaded in memory right now (Ollama's
   *     {@code /api/ps}; an OpenAI-kind server keeps every model it lists loaded)
   */
  record Probe(boolean reachable, String version, List<LocalReadiness.MissingModel> missing, List<String> problems,
      List<String> loaded) {
    public Probe {
      missing = List.copyOf(missing);
      problems = List.copyOf(problems);
      loaded = List.copyOf(loaded);
    }

    /** A probe that could not tell which models are loaded. */
    public Probe(boolean reachable, String version, List<LocalReadiness.MissingModel> missing, List<String> problems) {
      this(reachable, version, missing, problems, List.of());
    }

    public static Probe unreachable(String problem) {
      return new Probe(false, null, List.of(), List.of(problem));
    }
  }
}
