package io.spillway.core.http;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import java.util.concurrent.CompletionStage;
import java.util.function.IntSupplier;

/**
 * Refuses a request that has already passed through Spillway more than {@code server.maxHops}
 * times (counted in its {@code Via} header, see {@link Via}) with 508 {@code loop_detected}, before
 * it is authenticated, accounted or sent anywhere. A gateway whose {@code cloud.baseUrl} (or
 * {@code local.baseUrl}) points back at itself, or at a chain that leads back to it, so stops after
 * a few hops instead of filling its own concurrency limit.
 *
 * <p>The limit is read per request, so a reloaded {@code server.maxHops} applies at once.
 */
public final class LoopGuardInterceptor implements Interceptor {
  private final IntSupplier maxHops;

  /** @param maxHops how many Spillway hops a request may already have made when it arrives */
  public LoopGuardInterceptor(IntSupplier maxHops) {
    this.maxHops = maxHops;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    int hops = Via.spillwayHops(chain.request().headers());
    int allowed = maxHops.getAsInt();
    if (hops > allowed) {
      throw ErrorKind.LOOP_DETECTED.exception(
          "This request has already passed through Spillway " + hops + " times (its Via header), more than"
              + " server.maxHops (" + allowed + "): a gateway's cloud.baseUrl or local.baseUrl most likely points"
              + " back at a Spillway. Point it at the real upstream (SPILLWAY_CLOUD_BASE_URL), not at the gateway"
              + " your clients use.");
    }
    return chain.proceed(chain.request());
  }

  @Override
  public boolean mayBlock() {
    return false;
  }
}
