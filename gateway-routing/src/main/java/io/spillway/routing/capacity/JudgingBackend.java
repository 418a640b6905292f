package io.spillway.routing.capacity;

import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.ForwardingBackend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.concurrent.CompletionStage;

/**
 * Judges each buffered answer of one backend once, as it leaves the backend, and records the
 * verdict on the request ({@link #JUDGED}), so the metrics, the trace and the router that look at
 * the same answer read one verdict instead of classifying it again
 * ({@link CapacityClassifier#verdictOn}). Wraps the backend innermost. A streamed answer is not
 * judged here: only its first event tells, and the router reads that.
 */
public final class JudgingBackend extends ForwardingBackend {
  /**
   * The verdict on the last buffered answer a backend gave this request, with that answer: a
   * verdict counts only for the very answer it was given on, so an earlier attempt's cannot leak.
   */
  public static final Attribute<Judged> JUDGED = Attribute.of("judgedAnswer");

  /** An answer and the classifier's verdict on it. */
  public record Judged(GatewayResponse answer, Verdict verdict) {}

  private final CapacityClassifier classifier;

  public JudgingBackend(Backend delegate, CapacityClassifier classifier) {
    super(delegate);
    this.classifier = classifier;
  }

  @Override
  public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    return delegateCall(request).thenApply(response -> {
      if (!response.isStream()) {
        request.setAttribute(JUDGED, new Judged(response, classifier.classify(response)));
      }
      return response;
    });
  }

  @Override
  public String toString() {
    return "Judging(" + delegate + ")";
  }
}
