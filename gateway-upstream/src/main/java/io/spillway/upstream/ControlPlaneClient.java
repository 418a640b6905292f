package io.spillway.upstream;

import java.time.Duration;
import okhttp3.OkHttpClient;

/**
 * The blocking OkHttp client for a server's control plane: health probes, keep-warm loads and the
 * questions about its models ({@code /v1/models}, {@code /api/tags}, {@code /api/show}). Model
 * requests never go through it: they take the data path's client ({@code UpstreamHttp}, see
 * {@link OpenAiHttpBackend}). Control-plane calls are few, made from a scheduler or a start-up
 * thread, so OkHttp's defaults for pooling and connecting do.
 */
public final class ControlPlaneClient {
  private ControlPlaneClient() {}

  /**
   * A client for calls that may take as long as a model request ({@code timeout} a read, and the
   * whole call when the caller sets it), such as a keep-warm load; redirects are not followed.
   */
  public static OkHttpClient create(Duration connectTimeout, Duration timeout) {
    return new OkHttpClient.Builder()
        .connectTimeout(connectTimeout)
        .readTimeout(timeout)
        .writeTimeout(timeout)
        .followRedirects(false)
        .followSslRedirects(false)
        .build();
  }

  /**
   * A copy of {@code client} for health probes and model questions, which a reachable server
   * answers at once: a read may last the connect timeout, the whole call twice that.
   */
  public static OkHttpClient forProbes(OkHttpClient client, Duration connectTimeout) {
    return client.newBuilder()
        .readTimeout(connectTimeout)
        .callTimeout(connectTimeout.multipliedBy(2))
        .build();
  }

  /** Closes the pooled connections of {@code client} and stops its dispatcher's threads. */
  public static void close(OkHttpClient client) {
    client.connectionPool().evictAll();
    client.dispatcher().executorService().shutdown();
  }
}
