package io.spillway.local;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayRequest;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a local backend left out of a request because it cannot honour it, said once: as the typed
 * {@link RequestOutcome#droppedParams()} that later stages (logs, metrics) read, and as the
 * {@value #HEADER} header of the answer, a comma list such as {@code reasoning,tools.web_search}.
 */
public final class DroppedParams {
  private static final Logger log = LoggerFactory.getLogger(DroppedParams.class);

  public static final String HEADER = "x-spillway-dropped-params";

  private DroppedParams() {}

  /**
   * Records {@code dropped} on {@code request} and returns the headers that say so (empty when
   * nothing was dropped).
   */
  public static Headers report(GatewayRequest request, List<String> dropped) {
    if (dropped.isEmpty()) {
      return Headers.EMPTY;
    }
    RequestOutcome.of(request).dropped(List.copyOf(dropped));
    String list = String.join(",", dropped);
    log.debug("request {}: the local backend dropped what it cannot honour: {}", request.id(), list);
    return Headers.of(HEADER, list);
  }
}
