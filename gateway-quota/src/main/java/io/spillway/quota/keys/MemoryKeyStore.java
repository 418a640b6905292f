package io.spillway.quota.keys;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** Keys in memory ({@code store: memory}): for tests and throwaway gateways; lost on restart. */
public final class MemoryKeyStore implements KeyStore {
  private final Map<String, ApiKey> keys = new ConcurrentHashMap<>();
  private final Map<String, Long> usage = new ConcurrentHashMap<>();
  private final AtomicLong version = new AtomicLong();

  @Override
  public List<ApiKey> all() {
    return new ArrayList<>(keys.values());
  }

  @Override
  public ApiKey get(String id) {
    return keys.get(id);
  }

  @Override
  public synchronized boolean create(ApiKey key) {
    if (keys.putIfAbsent(key.id(), key) != null) {
      return false;
    }
    version.incrementAndGet();
    return true;
  }

  @Override
  public synchronized boolean replace(ApiKey expected, ApiKey next) {
    if (!keys.replace(expected.id(), expected, next)) {
      return false;
    }
    version.incrementAndGet();
    return true;
  }

  @Override
  public synchronized boolean remove(String id) {
    boolean removed = keys.remove(id) != null;
    if (removed) {
      version.incrementAndGet();
    }
    return removed;
  }

  @Override
  public long version() {
    return version.get();
  }

  @Override
  public long usage(String month, String id) {
    return usage.getOrDefault(month + "|" + id, 0L);
  }

  @Override
  public void addUsage(String month, String id, long tokens, String once) {
    usage.merge(month + "|" + id, tokens, io.spillway.quota.store.Saturating::add);
  }

  @Override
  public String describe() {
    return "memory";
  }

  @Override
  public void close() {}
}
