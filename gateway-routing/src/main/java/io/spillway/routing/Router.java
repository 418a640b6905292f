package io.spillway.routing;

import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The terminal stage: picks the backend for a request and calls it. Every response carries
 * {@code x-spillway-backend}. Each backend call holds a permit of the {@link AdmissionGate} until
 * its answer is complete: for a stream, until it ends or is closed.
 */
public final class Router implements Terminal {
  private final Backend cloud;
  private final AdmissionGate gate;

  public Router(Backend cloud) {
    this(cloud, AdmissionGate.OPEN);
  }

  public Router(Backend cloud, AdmissionGate gate) {
    this.cloud = cloud;
    this.gate = gate;
  }

  @Override
  public GatewayResponse handle(GatewayRequest request) {
    request.setAttribute(RequestAttributes.BACKEND, cloud.name());
    return admitted(cloud, request).withHeader("x-spillway-backend", cloud.name());
  }

  /** Calls {@code backend} inside a permit of the gate. */
  private GatewayResponse admitted(Backend backend, GatewayRequest request) {
    AdmissionGate.Permit permit = gate.enter(backend.name(), request);
    GatewayResponse response;
    try {
      response = backend.call(request);
    } catch (RuntimeException e) {
      permit.close();
      throw e;
    }
    if (!response.isStream()) {
      permit.close();
      return response;
    }
    return response.withStream(new PermitHoldingStream(response.stream(), permit));
  }

  /** Gives the permit back, once, when the stream ends, fails or is closed, whichever comes first. */
  private static final class PermitHoldingStream extends ForwardingEventStream {
    private final AdmissionGate.Permit permit;
    private final AtomicBoolean released = new AtomicBoolean();

    PermitHoldingStream(EventStream delegate, AdmissionGate.Permit permit) {
      super(delegate);
      this.permit = permit;
    }

    @Override
    public SseEvent next() {
      SseEvent event;
      try {
        event = delegate.next();
      } catch (RuntimeException e) {
        release();
        throw e;
      }
      if (event == null) {
        release();
      }
      return event;
    }

    @Override
    public void close() {
      try {
        delegate.close();
      } finally {
        release();
      }
    }

    private void release() {
      if (released.compareAndSet(false, true)) {
        permit.close();
      }
    }
  }
}
