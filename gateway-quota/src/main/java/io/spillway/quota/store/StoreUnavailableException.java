package io.spillway.quota.store;

/** The shared store is unreachable and {@code quota.failClosed} says to refuse rather than guess. */
public final class StoreUnavailableException extends RuntimeException {
  public StoreUnavailableException(String message) {
    super(message, null, false, false);
  }
}
