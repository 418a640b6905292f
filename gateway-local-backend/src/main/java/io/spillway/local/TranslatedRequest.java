package io.spillway.local;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;

/**
 * A request translated for a local server, what every local route does before sending: the
 * translation's body, the request refused as a whole when it asks for what the server cannot
 * serve, and what it left out reported once ({@link DroppedParams}) and counted. The report
 * travels on every answer, errors included ({@link #answered}).
 *
 * @param body what to send to the local server
 * @param report the headers that say what was left out (empty when nothing was)
 */
public record TranslatedRequest(Translation translation, ObjectNode body, Headers report) {

  /**
   * Translates {@code request} for {@code localModel}; throws the refusal
   * ({@link io.spillway.core.error.UnsupportedOnLocalException}) when a part cannot be served.
   *
   * @param dropped counts requests that were served with something left out ({@link #droppedCounter})
   */
  public static TranslatedRequest of(
      Translation translation, GatewayRequest request, String localModel, Counter dropped) {
    Unsupported unsupported = new Unsupported();
    ObjectNode body = translation.request(localModel, unsupported);
    unsupported.throwIfAny(translation.api());
    Headers report = DroppedParams.report(request, translation.dropped());
    if (!translation.dropped().isEmpty()) {
      dropped.increment();
    }
    return new TranslatedRequest(translation, body, report);
  }

  /** The counter of requests served locally with parameters left out, one per registry. */
  public static Counter droppedCounter(MeterRegistry meters) {
    return Counter.builder("spillway.local.dropped.requests")
        .description("requests served locally with parameters the local server cannot honour").register(meters);
  }

  /** {@code response} with the report's headers set on it. */
  public GatewayResponse answered(GatewayResponse response) {
    Headers.Builder headers = response.headers().toBuilder();
    report.forEach(headers::set);
    return response.withHeaders(headers.build());
  }
}
