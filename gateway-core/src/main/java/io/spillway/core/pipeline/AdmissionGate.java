package io.spillway.core.pipeline;

/**
 * The waiting area in front of a backend's concurrency limit. The router enters it right before it
 * calls a backend and holds the permit until the answer is complete (for a stream: until it ends).
 */
@FunctionalInterface
public interface AdmissionGate {
  /** Lets every request through at once. */
  AdmissionGate OPEN = new AdmissionGate() {
    @Override
    public Permit enter(BackendKind backend, GatewayRequest request) {
      return Permit.NONE;
    }

    @Override
    public Permit tryEnter(BackendKind backend, GatewayRequest request) {
      return Permit.NONE;
    }
  };

  /**
   * Blocks until {@code request} may call {@code backend}; throws a
   * {@link io.spillway.core.error.GatewayException} (429/503 with Retry-After) when it waited past its
   * tier's limit or the waiting area is full.
   */
  Permit enter(BackendKind backend, GatewayRequest request);

  /**
   * A place for {@code request} right now, without blocking (callable on an event loop), or null
   * when it would have to wait, be refused, or the gate cannot tell without blocking: the caller
   * then {@link #enter enters} where blocking is allowed. The default always answers null.
   */
  default Permit tryEnter(BackendKind backend, GatewayRequest request) {
    return null;
  }

  /** A place in a backend's concurrency limit; closing it gives the place to the next in line. */
  @FunctionalInterface
  interface Permit extends AutoCloseable {
    /** A permit that holds nothing. */
    Permit NONE = () -> {};

    @Override
    void close();
  }
}
