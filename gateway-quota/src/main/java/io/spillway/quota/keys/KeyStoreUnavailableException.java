package io.spillway.quota.keys;

/** The shared key store (Redis) did not answer. Carries no stack trace. */
public final class KeyStoreUnavailableException extends RuntimeException {
  public KeyStoreUnavailableException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
