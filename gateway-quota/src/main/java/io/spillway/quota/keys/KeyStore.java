package io.spillway.quota.keys;

import java.util.List;

/**
 * Where keys created through the admin API live, beside the usage: in memory ({@code store:
 * memory}), in {@code <dir>/keys.mv.db} ({@code embedded:<dir>}, survives a restart) or in Redis
 * ({@code redis://…}, shared by every replica). Only hashes are stored.
 *
 * <p>Every change is one atomic step, also across replicas: a key is created only under an id no
 * key has, replaced only while it is still what the caller read (compare-and-set), and removed with
 * its version bump; so a revoke racing a rotate on another replica leaves the key revoked, and two
 * rotates racing each other both apply, one after the other.
 *
 * <p>Thread-safe. Calls may block briefly (a file commit, a Redis round trip bounded by
 * {@code quota.storeTimeout}); they throw {@link KeyStoreUnavailableException} when a shared store
 * does not answer.
 */
public interface KeyStore extends AutoCloseable {
  /** Every stored key. */
  List<ApiKey> all();

  /** The key with {@code id}, or null. */
  ApiKey get(String id);

  /** Adds {@code key}; false (and nothing changed) when a key with its id exists. */
  boolean create(ApiKey key);

  /**
   * Replaces {@code expected} with {@code next} (same id) if the stored key is still
   * {@code expected}; false, and nothing changed, when it was changed or removed meanwhile.
   */
  boolean replace(ApiKey expected, ApiKey next);

  /** Removes the key; false when there was none with that id. */
  boolean remove(String id);

  /**
   * A number that changes whenever any key is put or removed, by this replica or another: a replica
   * that polls it knows when to read {@link #all} again.
   */
  long version();

  /** Tokens settled by the key in the quota month {@code month} ({@code 2026-11}). */
  long usage(String month, String id);

  /**
   * Adds settled tokens to the key's usage of {@code month}, once per {@code once}: the same call
   * made again (a write-back after a reply was lost) counts nothing more. Sums saturate.
   */
  void addUsage(String month, String id, long tokens, String once);

  /** Makes buffered usage durable (the embedded store); called on every sync tick. */
  default void flush() {}

  /** A short description for logs and status: {@code memory}, {@code embedded:<file>}, {@code redis host:port}. */
  String describe();

  @Override
  void close();
}
