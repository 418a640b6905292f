package io.spillway.local.ollama;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.Headers;
import io.spillway.core.time.DurationText;
import io.spillway.core.upstream.BodySource;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.upstream.PhaseTimeout;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSource;

/**
 * The data path's client interface over a blocking OkHttp client, for a backend built without the
 * event loops' client (tests and tools). Not the data path's contract in one respect: the exchange
 * is made on the thread that first asks for its {@linkplain UpstreamExchange#head() head}, which
 * blocks until the head is in, and its body's poll blocks until a chunk is in (it never answers
 * {@link BodySource#PENDING}). Timeouts, cancellation and failures are reported as the event loops'
 * client reports them.
 */
final class OkHttpUpstream implements UpstreamHttp {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final int CHUNK = 16 * 1024;

  private final OkHttpClient client;

  OkHttpUpstream(OkHttpClient client) {
    this.client = client;
  }

  @Override
  public UpstreamExchange send(OutboundRequest request) {
    Request.Builder builder = new Request.Builder().url(request.uri().toString());
    request.headers().forEach(builder::addHeader);
    builder.method(request.method(), request.body() == null ? null : RequestBody.create(request.body(), JSON));
    return new Exchange(request, client.newCall(builder.build()));
  }

  private static final class Exchange implements UpstreamExchange, BodySource {
    private final OutboundRequest request;
    private final Call call;
    private final PhaseTimeout whole;
    private volatile boolean wholeTimedOut;
    private CompletableFuture<UpstreamHead> head;
    private Response response;
    private BufferedSource source;
    private volatile boolean ended;

    Exchange(OutboundRequest request, Call call) {
      this.request = request;
      this.call = call;
      this.whole = new PhaseTimeout(request.wholeTimeout(), () -> {
        wholeTimedOut = true;
        call.cancel();
      });
    }

    @Override
    public synchronized CompletableFuture<UpstreamHead> head() {
      if (head == null) {
        head = new CompletableFuture<>();
        whole.begin();
        PhaseTimeout headTimer = new PhaseTimeout(request.headTimeout(), call::cancel);
        headTimer.begin();
        try {
          response = call.execute();
          if (headTimer.end()) {
            response.close();
            fail(timedOut(request.headTimeout(), "did not send its answer's head within", null));
          } else {
            source = response.body().source();
            Headers.Builder headers = Headers.builder();
            response.headers().forEach(pair -> headers.add(pair.getFirst().toLowerCase(java.util.Locale.ROOT),
                pair.getSecond()));
            head.complete(new UpstreamHead(response.code(), headers.build(),
                response.protocol().toString()));
          }
        } catch (IOException e) {
          if (headTimer.end()) {
            fail(timedOut(request.headTimeout(), "did not send its answer's head within", e));
          } else if (wholeTimedOut) {
            fail(timedOut(request.wholeTimeout(), "did not finish its answer within", e));
          } else {
            fail(UpstreamFailures.beforeResponse(request.backend(), e));
          }
        }
      }
      return head;
    }

    private void fail(UpstreamException e) {
      whole.end();
      head.completeExceptionally(e);
    }

    private UpstreamException timedOut(Duration limit, String what, Exception cause) {
      return new UpstreamException(request.backend(), UpstreamException.Failure.TIMEOUT,
          "The " + request.backend() + " backend " + what + " " + DurationText.format(limit), cause);
    }

    @Override
    public BodySource body() {
      return this;
    }

    @Override
    public void cancel() {
      call.cancel();
    }

    @Override
    public Runnable schedule(Duration delay, Runnable action) {
      PhaseTimeout timer = new PhaseTimeout(delay, action);
      timer.begin();
      return timer::end;
    }

    @Override
    public byte[] poll() {
      if (ended) {
        return null;
      }
      try (Buffer buffer = new Buffer()) {
        long read = source.read(buffer, CHUNK);
        if (read < 0) {
          ended = true;
          whole.end();
          response.close();
          return null;
        }
        return buffer.readByteArray();
      } catch (IOException e) {
        ended = true;
        response.close();
        if (whole.end() || wholeTimedOut) {
          throw timedOut(request.wholeTimeout(), "did not finish its answer within", e);
        }
        throw request.wholeTimeout() == null
            ? UpstreamFailures.midStream(request.backend(), e)
            : UpstreamFailures.midBody(request.backend(), e);
      }
    }

    @Override
    public void onReady(Runnable action) {
      action.run();
    }

    @Override
    public void close() {
      if (!ended) {
        // Cancel first: closing a half-read body would otherwise try to drain it for reuse.
        call.cancel();
        ended = true;
      }
      whole.end();
      if (response != null) {
        response.close();
      }
    }
  }
}
