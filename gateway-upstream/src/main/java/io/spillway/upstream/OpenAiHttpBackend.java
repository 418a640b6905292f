package io.spillway.upstream;

import io.spillway.core.Version;
import io.spillway.config.Durations;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.ForwardedHeaders;
import io.spillway.core.http.Headers;
import io.spillway.core.http.Via;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.http.RequestIds;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.InputStreamEventStream;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamEventStream;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import java.io.IOException;
import java.net.URI;
import java.util.function.BiConsumer;
import java.io.InputStream;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.Dispatcher;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSink;

/**
 * An OpenAI-compatible endpoint over OkHttp (the cloud, or a local vLLM / llama.cpp / Ollama
 * {@code /v1}): forwards the request as the client sent it, with the configured key instead of the
 * client's, a fresh {@code X-Request-ID} per attempt, Spillway's User-Agent, and {@code Via} with
 * Spillway's entry appended (see {@link Via}).
 *
 * <p>Upstream HTTP errors come back as responses with the upstream's status and an OpenAI error
 * body (the upstream's own when it sent one); transport failures, a 2xx answer that is not a JSON
 * object, an answer over {@code maxResponseSize} and a 401 for the gateway's own key are thrown as
 * {@link UpstreamException}. Client header values that are not visible ASCII are not forwarded. One instance serves all requests; it shares
 * nothing with other instances.
 */
public final class OpenAiHttpBackend implements Backend {
  private static final MediaType JSON = MediaType.get("application/json");
  /** How long an idle upstream connection is kept for reuse. */
  private static final Duration POOL_KEEP_ALIVE = Duration.ofMinutes(5);
  /** How late an idle connection past its keep-alive (or past maxIdleConnections) may be closed. */
  private static final Duration POOL_SWEEP_TICK = Duration.ofSeconds(1);
  /**
   * Connection pools per cloud backend. OkHttp finds a connection for a call by scanning every
   * connection in its pool, busy ones included, under their locks: with thousands of open streams
   * that scan was most of the gateway's CPU (docs/performance.md). Calls spread at random over one
   * pool per {@value #CALLS_PER_POOL} calls in progress, up to this many pools, so each scan sees at
   * most a few hundred connections, and a quiet gateway keeps reusing the connections of one pool.
   */
  static final int POOL_SHARDS = 16;
  static final int CALLS_PER_POOL = 128;

  private final String name;
  private final UpstreamSettings config;
  private final UpstreamDialect dialect;
  private final OkHttpClient[] clients;
  /** Calls whose exchange is open: from the request until the answer is read or its stream closed. */
  private final AtomicInteger open = new AtomicInteger();
  /** Each route's upstream URL, parsed once (parsing and IDN-checking it per call was ~3% of CPU). */
  private final Map<Route, HttpUrl> urls = new EnumMap<>(Route.class);
  /** The same URLs for the data path's client. */
  private final Map<Route, URI> uris = new EnumMap<>(Route.class);
  /** The data path's client (the front end's event loops); null: every call over OkHttp. */
  private final UpstreamHttp http;

  /** A backend whose calls spread over {@value #POOL_SHARDS} OkHttp connection pools. */
  public OpenAiHttpBackend(String name, UpstreamSettings config) {
    this(name, config, UpstreamDialect.OPENAI);
  }

  /** A backend addressed in {@code dialect} (OpenAI's own, or Azure OpenAI's deployment URLs), over OkHttp. */
  public OpenAiHttpBackend(String name, UpstreamSettings config, UpstreamDialect dialect) {
    this(name, config, dialect, null);
  }

  /**
   * A backend addressed in {@code dialect} that makes its calls over {@code http}, the data path's
   * client on the front end's event loops (null: over OkHttp).
   */
  public OpenAiHttpBackend(String name, UpstreamSettings config, UpstreamDialect dialect, UpstreamHttp http) {
    this(name, config, dialect, http == null ? sharded(defaultClient(config), config) : null, http);
  }

  /** A backend that makes every call with {@code client}. */
  public OpenAiHttpBackend(String name, UpstreamSettings config, OkHttpClient client) {
    this(name, config, UpstreamDialect.OPENAI, new OkHttpClient[] {client}, null);
  }

  private OpenAiHttpBackend(
      String name, UpstreamSettings config, UpstreamDialect dialect, OkHttpClient[] clients, UpstreamHttp http) {
    this.name = name;
    this.config = config;
    this.dialect = dialect;
    this.clients = clients;
    this.http = http;
    if (!dialect.urlPerModel()) {
      for (Route route : Route.values()) {
        HttpUrl url = dialect.url(config.baseUrl(), route, null);
        if (url != null) {
          urls.put(route, url);
          uris.put(route, url.uri());
        }
      }
    }
  }

  /**
   * The client every backend built from these settings should start from (shares nothing).
   *
   * <p>Three settings exist for the cost per call, measured in docs/performance.md: the pool's
   * housekeeping runs on a tick ({@link PoolSweeper}) instead of after every call, blocking reads
   * do not carry a socket timeout (see {@link #untimedSocketReads}), and new connections are made on
   * the calling thread ({@code fastFallback(false)}): OkHttp's "happy eyeballs" runs every connect
   * attempt as a task of its shared task runner, whose one lock thousands of concurrent new
   * streams queued on for seconds. Addresses are then tried one after another, as OkHttp 4 did.
   */
  public static OkHttpClient defaultClient(UpstreamSettings config) {
    Dispatcher dispatcher = new Dispatcher();
    dispatcher.setMaxRequests(Integer.MAX_VALUE);
    dispatcher.setMaxRequestsPerHost(Integer.MAX_VALUE);
    return new OkHttpClient.Builder()
        .dispatcher(dispatcher)
        .connectionPool(PoolSweeper.pool(config.maxIdleConnections(), POOL_KEEP_ALIVE, POOL_SWEEP_TICK))
        .addNetworkInterceptor(OpenAiHttpBackend::untimedSocketReads)
        .fastFallback(false)
        .connectTimeout(config.connectTimeout())
        .readTimeout(config.timeout())
        .writeTimeout(config.timeout())
        .retryOnConnectionFailure(true)
        .followRedirects(false)
        .followSslRedirects(false)
        .build();
  }

  /**
   * {@code base} and copies of it that differ only in their connection pool, which share its
   * dispatcher and settings; {@code maxIdleConnections} is split between the pools.
   */
  private static OkHttpClient[] sharded(OkHttpClient base, UpstreamSettings config) {
    OkHttpClient[] clients = new OkHttpClient[POOL_SHARDS];
    int maxIdle = Math.max(1, Math.ceilDiv(config.maxIdleConnections(), POOL_SHARDS));
    for (int i = 0; i < clients.length; i++) {
      clients[i] = base.newBuilder()
          .connectionPool(PoolSweeper.pool(maxIdle, POOL_KEEP_ALIVE, POOL_SWEEP_TICK))
          .build();
    }
    return clients;
  }

  /** A client for a call when {@code inProgress} calls (this one included) are open. */
  private OkHttpClient client(int inProgress) {
    int pools = Math.min(clients.length, 1 + (inProgress - 1) / CALLS_PER_POOL);
    return pools <= 1 ? clients[0] : clients[ThreadLocalRandom.current().nextInt(pools)];
  }

  /**
   * Clears the socket timeout OkHttp sets on an HTTP/1.1 connection for each exchange. OkHttp
   * enforces its read timeout twice: with okio's watchdog on the socket's source, which closes the
   * socket when a read outlasts it, and with {@code SO_TIMEOUT}. On a virtual thread the latter
   * turns every blocking read into a timed park, which schedules and cancels a timer on the
   * virtual-thread scheduler (a wake-up of its delay-scheduler thread per read, which alone used
   * ~7% of the JVM's CPU under load). The watchdog alone still ends a read that waits longer than the configured timeout.
   */
  static Response untimedSocketReads(Interceptor.Chain chain) throws IOException {
    Connection connection = chain.connection();
    if (connection != null && connection.protocol() == Protocol.HTTP_1_1) {
      connection.socket().setSoTimeout(0);
    }
    return chain.proceed(chain.request());
  }

  @Override
  public String name() {
    return name;
  }

  /**
   * The answer, waited for: over the data path's client the exchange runs on an event loop and
   * this (virtual) thread only waits for {@link #callAsync}; over OkHttp the call blocks here.
   */
  @Override
  public GatewayResponse call(GatewayRequest request) {
    return http != null ? Blocking.await(callAsync(request)) : callOverOkHttp(request);
  }

  /**
   * The answer, without blocking: over the data path's client the stage completes on the event
   * loop that received the head (for a buffered answer: its whole body), and no thread waits
   * meanwhile; over OkHttp the call runs where blocking is allowed ({@link Blocking#supply}).
   */
  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    if (http == null) {
      return Blocking.supply(() -> callOverOkHttp(request));
    }
    open.incrementAndGet();
    Runnable end = endOnce();
    CompletableFuture<GatewayResponse> answer;
    try {
      answer = exchange(http, request, end);
    } catch (RuntimeException e) {
      end.run();
      return CompletableFuture.failedFuture(e);
    }
    // A streamed answer holds its exchange until the stream is closed; anything else is over.
    return answer.whenComplete((response, failure) -> {
      if (failure != null || !response.isStream()) {
        end.run();
      }
    });
  }

  /** Counts a call out of {@link #open} when it first runs. */
  private Runnable endOnce() {
    AtomicBoolean ended = new AtomicBoolean();
    return () -> {
      if (ended.compareAndSet(false, true)) {
        open.decrementAndGet();
      }
    };
  }

  private GatewayResponse callOverOkHttp(GatewayRequest request) {
    int inProgress = open.incrementAndGet();
    Runnable end = endOnce();
    boolean handedOver = false;
    try {
      Call call = client(inProgress).newCall(toUpstream(request));
      // A client that goes away cancels the call, before its first byte too (the upstream sees its
      // connection closed). The registration ends with the request; cancelling a finished call is a no-op.
      ClientDisconnect.of(request).onDisconnect(call::cancel);
      GatewayResponse answer = exchange(call, request, end);
      handedOver = answer.isStream();
      return answer;
    } finally {
      if (!handedOver) {
        end.run();
      }
    }
  }

  /**
   * Makes the call over the data path's client; a streamed answer runs {@code end} when its stream
   * is closed. The exchange runs on the client connection's event loop, and so does everything
   * after its head: the stage completes there, with a stream that is then read from that loop.
   */
  private CompletableFuture<GatewayResponse> exchange(UpstreamHttp client, GatewayRequest request, Runnable end) {
    boolean stream = request.stream();
    URI uri = uri(request);
    Headers.Builder headers = Headers.builder();
    upstreamHeaders(request, headers::add);
    boolean post = request.route().hasBody();
    if (post) {
      headers.set("Content-Type", "application/json");
      if (stream) {
        headers.set("Accept", "text/event-stream");
      }
    }
    UpstreamExchange exchange = client.send(new OutboundRequest(name, post ? "POST" : "GET", uri,
        headers.build(), post ? request.bodyBytes() : null, config.connectTimeout(),
        config.timeout(), stream ? null : config.timeout(), request.attribute(RequestAttributes.CONNECTION_LOOP),
        config.h2c()));
    ClientDisconnect.of(request).onDisconnect(exchange::cancel);
    return exchange.head().thenCompose(head -> answer(request, exchange, head, end));
  }

  /** What the head (and, unless it opens a stream, the whole body) of an exchange answers. */
  private CompletableFuture<GatewayResponse> answer(
      GatewayRequest request, UpstreamExchange exchange, UpstreamHead head, Runnable end) {
    if (head.status() == 401) {
      exchange.cancel();
      throw credentialsRejected();
    }
    boolean stream = request.stream();
    Headers answerHeaders = responseHeaders(head.headers());
    String contentType = head.header("content-type");
    boolean success = head.status() >= 200 && head.status() < 300;
    if (stream && success && contentType != null && contentType.startsWith("text/event-stream")) {
      return CompletableFuture.completedFuture(GatewayResponse.streamed(head.status(), answerHeaders,
          new UpstreamEventStream(name, exchange, config.timeout(), end)));
    }
    // A stream call has no whole-call limit of its own: its one JSON body is bounded here.
    Runnable whole = stream ? exchange.schedule(config.timeout(), exchange::cancel) : () -> {};
    return UpstreamCalls.readAllAsync(exchange.body(), config.maxResponseSize().bytes())
        .whenComplete((bytes, failure) -> whole.run())
        .thenApply(bytes -> {
          if (bytes == null) {
            throw tooLarge();
          }
          GatewayResponse answer = UpstreamAnswers.checked(name, head.status(), answerHeaders, bytes);
          if (!stream) {
            return answer;
          }
          end.run(); // the exchange is over; the stream told from it holds no upstream resource
          return asStream(request, answer);
        });
  }

  private URI uri(GatewayRequest request) {
    URI known = dialect.urlPerModel() ? null : uris.get(request.route());
    if (known != null) {
      return known;
    }
    HttpUrl url = dialect.urlPerModel() ? dialect.url(config.baseUrl(), request.route(), request.model()) : null;
    return url != null ? url.uri() : URI.create(config.baseUrl() + request.route().upstreamPath());
  }

  private UpstreamException credentialsRejected() {
    // The upstream refused the gateway's own key (or wants one): never the client's fault, and
    // its body may quote part of that key.
    return new UpstreamException(name, UpstreamException.Failure.CREDENTIALS_REJECTED,
        "The " + name + " backend refused the gateway's own credentials (HTTP 401). This is not a"
            + " problem with your key; the gateway's operator must fix its configuration.", null);
  }

  /** Makes the call; a streamed answer runs {@code end} when its stream is closed. */
  private GatewayResponse exchange(Call call, GatewayRequest request, Runnable end) {
    boolean stream = request.stream();
    Response response;
    if (!stream) {
      call.timeout().timeout(config.timeout().toMillis(), TimeUnit.MILLISECONDS);
      try {
        response = call.execute();
      } catch (IOException e) {
        throw UpstreamFailures.beforeResponse(name, e);
      }
    } else {
      response = streamHead(call);
    }
    if (response.code() == 401) {
      response.close();
      throw credentialsRejected();
    }
    Headers headers = responseHeaders(response);
    ResponseBody body = response.body();
    String contentType = response.header("content-type", "");
    if (stream && response.isSuccessful() && contentType.startsWith("text/event-stream")) {
      InputStream in = body.byteStream();
      InputStreamEventStream events = new InputStreamEventStream(name, in, () -> {
        end.run();
        // Cancel first: closing a half-read body would otherwise try to drain it for reuse.
        call.cancel();
        response.close();
      });
      return GatewayResponse.streamed(response.code(), headers, new TimedEventStream(name, events, config.timeout()));
    }
    try (response) {
      if (!stream) {
        return UpstreamAnswers.checked(name, response.code(), headers, readBounded(body, config.maxResponseSize().bytes()));
      }
      // A stream request answered with one JSON body: read within the timeout (a stream call has no
      // whole-call limit), then told as the stream the client asked for.
      PhaseTimeout whole = new PhaseTimeout(config.timeout(), call::cancel);
      whole.begin();
      byte[] bytes;
      try {
        bytes = readBounded(body, config.maxResponseSize().bytes());
      } catch (UpstreamException e) {
        throw whole.end() ? bodyTimedOut(e) : e;
      }
      if (whole.end()) {
        throw bodyTimedOut(null);
      }
      end.run(); // the exchange is over; the stream told from it holds no upstream resource
      return asStream(request, UpstreamAnswers.checked(name, response.code(), headers, bytes));
    }
  }

  /** A successful buffered answer to a stream request, as that stream ({@link AnswerAsStream}); errors stay as they are. */
  private static GatewayResponse asStream(GatewayRequest request, GatewayResponse answer) {
    if (!answer.isSuccessful() || answer.json() == null) {
      return answer;
    }
    EventStream events = AnswerAsStream.of(request.route(), answer.json());
    if (events == null) {
      return answer;
    }
    return GatewayResponse.streamed(answer.status(),
        answer.headers().with("content-type", GatewayResponse.EVENT_STREAM), events);
  }

  private UpstreamException bodyTimedOut(Exception cause) {
    return new UpstreamException(name, UpstreamException.Failure.TIMEOUT,
        "The " + name + " backend did not finish its answer within " + Durations.format(config.timeout()), cause);
  }

  /**
   * The head of a streamed answer, which must arrive whole within the timeout (the body then has
   * a limit per event, see {@link TimedEventStream}; a whole-call limit would cut long streams).
   */
  private Response streamHead(Call call) {
    PhaseTimeout head = new PhaseTimeout(config.timeout(), call::cancel);
    head.begin();
    Response response;
    try {
      response = call.execute();
    } catch (IOException e) {
      if (head.end()) {
        throw headTimedOut(e);
      }
      throw UpstreamFailures.beforeResponse(name, e);
    }
    if (head.end()) {
      response.close();
      throw headTimedOut(null);
    }
    return response;
  }

  private UpstreamException headTimedOut(IOException cause) {
    return new UpstreamException(name, UpstreamException.Failure.TIMEOUT,
        "The " + name + " backend did not send its answer's head within " + Durations.format(config.timeout()), cause);
  }

  private Request toUpstream(GatewayRequest request) {
    HttpUrl url = dialect.urlPerModel() ? dialect.url(config.baseUrl(), request.route(), request.model())
        : urls.get(request.route());
    Request.Builder builder = url != null
        ? new Request.Builder().url(url)
        : new Request.Builder().url(config.baseUrl() + request.route().upstreamPath());
    upstreamHeaders(request, builder::addHeader);
    if (!request.route().hasBody()) {
      builder.get();
    } else {
      builder.post(new OneShotBody(request.bodyBytes()));
      if (request.stream()) {
        builder.header("Accept", "text/event-stream");
      }
    }
    return builder.build();
  }

  /**
   * The headers sent upstream: the client's that may be forwarded, the attempt's trace context,
   * the gateway's key, a fresh {@code X-Request-ID}, the client's id, Spillway's User-Agent and Via.
   */
  private void upstreamHeaders(GatewayRequest request, BiConsumer<String, String> header) {
    Set<String> hopByHop = ForwardedHeaders.connectionTokens(request.headers());
    Map<String, String> traceContext = request.attribute(RequestAttributes.TRACE_CONTEXT);
    request.headers().forEach((name, value) -> {
      if (ForwardedHeaders.forwardUpstream(name) && ForwardedHeaders.forwardableValue(value)
          && !hopByHop.contains(name.toLowerCase(Locale.ROOT))
          && (traceContext == null || !ForwardedHeaders.isTraceContext(name))) {
        header.accept(name, value);
      }
    });
    if (traceContext != null) {
      traceContext.forEach(header);
    }
    if (config.apiKey() != null) {
      dialect.authorize(header, config.apiKey());
    }
    header.accept("X-Request-ID", RequestIds.fresh());
    header.accept("X-Client-Request-ID", request.id());
    header.accept("User-Agent", Version.USER_AGENT);
    header.accept("Via", Via.forwarded(request.headers()));
  }

  private static Headers responseHeaders(Headers upstream) {
    Headers.Builder headers = Headers.builder();
    upstream.forEach((name, value) -> {
      if (ForwardedHeaders.returnToClient(name)) {
        headers.add(name, value);
      }
    });
    String upstreamId = upstream.get("x-request-id");
    if (upstreamId != null && RequestIds.acceptable(upstreamId) != null) {
      headers.add("x-upstream-request-id", upstreamId);
    }
    return headers.build();
  }

  private static Headers responseHeaders(Response response) {
    Headers.Builder headers = Headers.builder();
    for (int i = 0; i < response.headers().size(); i++) {
      String name = response.headers().name(i);
      if (ForwardedHeaders.returnToClient(name)) {
        headers.add(name, response.headers().value(i));
      }
    }
    String upstreamId = response.header("x-request-id");
    if (upstreamId != null && RequestIds.acceptable(upstreamId) != null) {
      headers.add("x-upstream-request-id", upstreamId);
    }
    return headers.build();
  }

  private byte[] readBounded(ResponseBody body, long limit) {
    if (body.contentLength() > limit) {
      throw tooLarge();
    }
    try (InputStream in = body.byteStream()) {
      byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
      if (bytes.length > limit) {
        throw tooLarge();
      }
      return bytes;
    } catch (IOException e) {
      throw UpstreamFailures.midBody(name, e);
    }
  }

  private UpstreamException tooLarge() {
    return new UpstreamException(name, UpstreamException.Failure.RESPONSE_TOO_LARGE,
        "The " + name + " backend's answer is larger than the gateway's limit (maxResponseSize)", null);
  }

  /**
   * A request body OkHttp may send only once. Its connection-failure retry would otherwise re-send
   * a POST after the upstream reset or closed the connection without answering, and by then the
   * upstream may already be generating (and billing) the first copy. Failures before the request
   * was sent (connect errors) are still retried on the next route; retrying elsewhere after that is
   * the router's decision ({@link UpstreamException#unprocessed()}).
   */
  private static final class OneShotBody extends RequestBody {
    private final byte[] bytes;

    OneShotBody(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public MediaType contentType() {
      return JSON;
    }

    @Override
    public long contentLength() {
      return bytes.length;
    }

    @Override
    public boolean isOneShot() {
      return true;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      sink.write(bytes);
    }
  }

  /** The configured timeout: the whole call for buffered answers. */
  public Duration timeout() {
    return config.timeout();
  }
}
