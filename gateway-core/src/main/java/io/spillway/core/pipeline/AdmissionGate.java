package io.spillway.core.pipeline;

/**
 * The waiting area in front of a backend's concurrency limit. The router enters it right before it
 * calls a backend and holds the permit until the answer is complete (for a stream: until it ends).
 */
@FunctionalInterface
public interface AdmissionGate {
  /** Lets every request through at once. */
  AdmissionGate OPEN = (backend, request) -> () -> {};

  /**
   * Blocks until {@code request} may call {@code backend}; throws a
   * {@link io.spillway.core.error.GatewayException} (429/503 with Retry-After) when it waited past its
   * tier's limit or the waiting area is full.
   */
  Permit enter(String backend, GatewayRequest request);

  /** A place in a backend's concurrency limit; closing it gives the place to the next in line. */
  @FunctionalInterface
  interface Permit extends AutoCloseable {
    @Override
    void close();
  }
}
