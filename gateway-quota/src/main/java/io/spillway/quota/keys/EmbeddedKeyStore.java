package io.spillway.quota.keys;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * Keys in one H2 MVStore file, {@code <dir>/keys.mv.db}, beside the usage file of the embedded
 * usage store. A key change is committed before the admin call answers; per-key usage is committed
 * on the next {@link #flush} (every {@code admin.keySyncInterval}) and on close.
 */
public final class EmbeddedKeyStore implements KeyStore {
  static final String FILE_NAME = "keys.mv.db";

  private final Path file;
  private final MVStore mv;
  private final MVMap<String, String> keys;
  private final MVMap<String, Long> usage;
  private final AtomicLong version = new AtomicLong();
  private final AtomicBoolean usageDirty = new AtomicBoolean();

  private EmbeddedKeyStore(Path file, MVStore mv) {
    this.file = file;
    this.mv = mv;
    this.keys = mv.openMap("keys");
    this.usage = mv.openMap("usage");
  }

  public static EmbeddedKeyStore open(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the key store directory " + dir, e);
    }
    Path file = dir.resolve(FILE_NAME);
    try {
      return new EmbeddedKeyStore(file,
          new MVStore.Builder().fileName(file.toString()).autoCommitDisabled().open());
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot open the key store " + file
          + " (is another gateway using the same directory?): " + e.getMessage(), e);
    }
  }

  @Override
  public List<ApiKey> all() {
    List<ApiKey> out = new ArrayList<>();
    keys.values().forEach(stored -> out.add(ApiKey.fromStored(stored)));
    return out;
  }

  @Override
  public ApiKey get(String id) {
    String stored = keys.get(id);
    return stored == null ? null : ApiKey.fromStored(stored);
  }

  @Override
  public synchronized boolean create(ApiKey key) {
    if (keys.putIfAbsent(key.id(), key.toStored()) != null) {
      return false;
    }
    mv.commit();
    version.incrementAndGet();
    return true;
  }

  @Override
  public synchronized boolean replace(ApiKey expected, ApiKey next) {
    if (!keys.replace(expected.id(), expected.toStored(), next.toStored())) {
      return false;
    }
    mv.commit();
    version.incrementAndGet();
    return true;
  }

  @Override
  public synchronized boolean remove(String id) {
    boolean removed = keys.remove(id) != null;
    if (removed) {
      mv.commit();
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
    Long used = usage.get(month + "|" + id);
    return used == null ? 0 : used;
  }

  @Override
  public void addUsage(String month, String id, long tokens, String once) {
    usage.merge(month + "|" + id, tokens, io.spillway.quota.store.Saturating::add);
    usageDirty.set(true);
  }

  @Override
  public synchronized void flush() {
    if (!mv.isClosed() && usageDirty.getAndSet(false)) {
      mv.commit();
    }
  }

  @Override
  public String describe() {
    return "embedded:" + file;
  }

  @Override
  public synchronized void close() {
    if (!mv.isClosed()) {
      mv.commit();
      mv.close();
    }
  }
}
