package io.spillway.quota.keys;

import io.spillway.core.pipeline.Tier;
import io.spillway.quota.pool.KeyBudgets;
import io.spillway.quota.ratelimit.KeyRateLimits;
import io.spillway.quota.store.Saturating;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keys created, rotated and revoked through the admin API, beside the config file's keys.
 *
 * <p>The {@link KeyStore} is the truth; each replica authenticates against a snapshot of it that
 * {@link #startSync} refreshes whenever the store's version moves (every {@code admin.keySyncInterval},
 * so a change made on one replica reaches every other within a second). A change made here refreshes
 * the snapshot at once. Only SHA-256 hashes are kept, and a presented key is confirmed with a
 * constant-time comparison. When the store does not answer, the last snapshot keeps serving.
 *
 * <p>A rotated key keeps its id, team, tier and limits and gets a new secret; the old secret keeps
 * working until the end of the overlap, and a second rotation keeps the first one's overlap. Every
 * change is atomic in the store ({@link KeyStore}): a rotate is a compare-and-set retried on the key
 * as it now is, so two rotates both apply (each secret they answered works) and a rotate never brings
 * back a key revoked meanwhile.
 *
 * <p>Per-key usage the store could not take (down, or slower than its timeout) is kept, each amount
 * with the id of its first attempt, and written back once it answers: an amount whose first write did
 * reach the store counts once. While the store does not answer, a key's budget is checked against its
 * usage as last read plus what this replica kept. Thread-safe.
 */
public final class ApiKeys implements KeyBudgets, KeyRateLimits, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ApiKeys.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Every secret this gateway issues starts with it, so a leaked one is easy to recognise. */
  public static final String SECRET_PREFIX = "sk-spw-";
  public static final String ID_PREFIX = "key_";

  /** What a new key names and limits. */
  public record NewKey(String team, Tier tier, Instant expiresAt, List<String> models, Long monthlyTokens,
      Integer requestsPerMinute) {}

  /** A key and its plain secret, shown once. */
  public record Issued(ApiKey key, String secret) {}

  /**
   * The key a presented secret belongs to; {@code previous} when it is a secret from before a
   * rotation, accepted until {@code previousUntil}.
   */
  public record Match(ApiKey key, boolean previous, Instant previousUntil) {}

  /** How often a rotate reads the key again after another change won the race. */
  private static final int ROTATE_ATTEMPTS = 16;

  private record Entry(byte[] digest, Match match) {}

  private record Snapshot(Map<ByteBuffer, Entry> byDigest, Map<String, ApiKey> byId) {
    static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of());
  }

  private final KeyStore store;
  private final Clock clock;
  private volatile Snapshot snapshot = Snapshot.EMPTY;
  private long version = Long.MIN_VALUE;
  private ScheduledExecutorService sync;
  private volatile boolean storeDown;
  private volatile boolean everRead;
  /** Per-key amounts the store could not take while it was away; written back, each once, when it answers. */
  private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();
  /** Per-key usage as the store last answered it: the budget check's figure while the store is away. */
  private final Map<Pending.Key, Long> lastUsage = new ConcurrentHashMap<>();

  /** An amount not yet in the store; {@code once} is the id of its first attempt. */
  private record Pending(String month, String keyId, long tokens, String once) {
    record Key(String month, String keyId) {}

    Key key() {
      return new Key(month, keyId);
    }
  }

  public ApiKeys(KeyStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
    sync();
  }

  /** Polls the store every {@code every} for changes made elsewhere. */
  public synchronized void startSync(Duration every) {
    if (sync != null) {
      return;
    }
    sync = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("spillway-key-sync").daemon().factory());
    long millis = Math.max(1, every.toMillis());
    sync.scheduleWithFixedDelay(this::sync, millis, millis, TimeUnit.MILLISECONDS);
  }

  /** Reads the store again if its version moved, and writes buffered usage. Never throws. */
  public void sync() {
    try {
      synchronized (this) {
        long current = store.version();
        if (current != version) {
          List<ApiKey> keys = store.all();
          snapshot = build(keys);
          version = current;
        }
      }
      store.flush();
      writeBackPending();
      if (storeDown) {
        storeDown = false;
        log.warn("The key store ({}) answers again", store.describe());
      }
      everRead = true;
    } catch (RuntimeException e) {
      if (!storeDown) {
        storeDown = true;
        if (everRead) {
          log.error("The key store ({}) does not answer ({}); API keys keep working as last seen", store.describe(),
              e.getMessage());
        } else {
          // At start the usage store on the same Redis already says so in its one line; API-created keys
          // are known from the first successful read on.
          log.info("The key store ({}) has not answered yet; API-created keys work once it does", store.describe());
        }
      }
    }
  }

  private static Snapshot build(List<ApiKey> keys) {
    Map<ByteBuffer, Entry> byDigest = new HashMap<>();
    Map<String, ApiKey> byId = new HashMap<>();
    for (ApiKey key : keys) {
      byId.put(key.id(), key);
      byte[] digest = KeyHashes.parse(key.hash());
      byDigest.put(ByteBuffer.wrap(digest), new Entry(digest, new Match(key, false, null)));
      for (ApiKey.PreviousSecret secret : key.previousSecrets()) {
        byte[] previous = KeyHashes.parse(secret.hash());
        byDigest.putIfAbsent(ByteBuffer.wrap(previous), new Entry(previous, new Match(key, true, secret.until())));
      }
    }
    return new Snapshot(Map.copyOf(byDigest), Map.copyOf(byId));
  }

  /** The key {@code presented} belongs to (expired or not), or null. */
  public Match authenticate(String presented) {
    byte[] digest = KeyHashes.digest(presented);
    Entry entry = snapshot.byDigest().get(ByteBuffer.wrap(digest));
    if (entry == null || !MessageDigest.isEqual(entry.digest(), digest)) {
      return null;
    }
    return entry.match();
  }

  /**
   * Creates a key and stores its hash.
   *
   * @throws KeyStoreUnavailableException when the store does not answer
   */
  public Issued create(NewKey spec) {
    String secret = newSecret();
    ApiKey key;
    do {
      // An id no key has: the store refuses one that exists (64 random bits: in practice never).
      String id = ID_PREFIX + HexFormat.of().formatHex(randomBytes(8));
      key = new ApiKey(id, spec.team(), spec.tier(), KeyHashes.hash(secret), clock.instant(), spec.expiresAt(),
          spec.models(), spec.monthlyTokens(), spec.requestsPerMinute(), null, null);
    } while (!store.create(key));
    sync();
    return new Issued(key, secret);
  }

  /**
   * Gives the key a new secret; the old one keeps working for {@code overlap}. Null when no key has
   * that id.
   */
  public Issued rotate(String id, Duration overlap) {
    String secret = newSecret();
    for (int attempt = 0; attempt < ROTATE_ATTEMPTS; attempt++) {
      ApiKey current = find(id);
      if (current == null) {
        return null; // never created, or revoked (perhaps a moment ago on another replica): stays revoked
      }
      Instant now = clock.instant();
      ApiKey rotated = current.rotated(KeyHashes.hash(secret), now.plus(overlap), now);
      if (store.replace(current, rotated)) {
        sync();
        return new Issued(rotated, secret);
      }
      // Another replica changed the key between the read and the write: rotate the key as it is now.
    }
    throw new KeyStoreUnavailableException("the key " + id + " kept changing during " + ROTATE_ATTEMPTS
        + " attempts to rotate it; try again", null);
  }

  /** Deletes the key everywhere; false when no key has that id. */
  public boolean revoke(String id) {
    boolean removed = store.remove(id);
    sync();
    return removed;
  }

  /** The key with {@code id}, read from the store (not the snapshot); null when there is none. */
  public ApiKey find(String id) {
    return store.get(id);
  }

  /** The keys as this replica last saw them, oldest first. */
  public List<ApiKey> list() {
    List<ApiKey> keys = new ArrayList<>(snapshot.byId().values());
    keys.sort(Comparator.comparing(ApiKey::createdAt).thenComparing(ApiKey::id));
    return keys;
  }

  @Override
  public Long monthlyTokens(String keyId) {
    ApiKey key = snapshot.byId().get(keyId);
    return key == null ? null : key.monthlyTokens();
  }

  @Override
  public Integer requestsPerMinute(String keyId) {
    ApiKey key = snapshot.byId().get(keyId);
    return key == null ? null : key.requestsPerMinute();
  }

  /**
   * The key's usage of {@code month}: the store's figure plus what this replica kept for it; while the
   * store does not answer (down, or slower than {@code quota.storeTimeout}), the figure it last
   * answered. Never throws for a store that is away: a budget check must not fail a request.
   */
  @Override
  public long used(String month, String keyId) {
    Pending.Key key = new Pending.Key(month, keyId);
    long stored = lastUsage.getOrDefault(key, 0L);
    if (!storeDown) {
      // While the sync found the store away, requests do not each wait for it again.
      try {
        stored = store.usage(month, keyId);
        lastUsage.put(key, stored);
      } catch (KeyStoreUnavailableException e) {
        // the last figure, above
      }
    }
    long kept = 0;
    for (Pending p : pending) {
      if (p.month().equals(month) && p.keyId().equals(keyId)) {
        kept = Saturating.add(kept, p.tokens());
      }
    }
    return Saturating.add(stored, kept);
  }

  @Override
  public void add(String month, String keyId, long tokens) {
    if (tokens == 0 || !snapshot.byId().containsKey(keyId)) {
      return;
    }
    Pending amount = new Pending(month, keyId, tokens, UUID.randomUUID().toString());
    if (storeDown) {
      pending.add(amount);
      return;
    }
    try {
      store.addUsage(month, keyId, tokens, amount.once());
    } catch (KeyStoreUnavailableException e) {
      // It may have reached the store before the answer was lost: the write-back carries the same id.
      pending.add(amount);
      log.warn("Could not count {} tokens for key {} now ({}); kept, and written when the key store answers",
          tokens, keyId, e.getMessage());
    }
  }

  /** Writes the amounts kept while the store was away, oldest first; what it still refuses stays queued. */
  private void writeBackPending() {
    Pending next;
    while ((next = pending.peek()) != null) {
      try {
        store.addUsage(next.month(), next.keyId(), next.tokens(), next.once());
      } catch (KeyStoreUnavailableException e) {
        return;
      }
      pending.poll();
    }
  }

  /** Tokens kept for the store that it has not taken yet (0 while it answers). */
  public long pendingTokens() {
    return pending.stream().mapToLong(Pending::tokens).reduce(0, Saturating::add);
  }

  private static String newSecret() {
    return SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(randomBytes(32));
  }

  private static byte[] randomBytes(int n) {
    byte[] bytes = new byte[n];
    RANDOM.nextBytes(bytes);
    return bytes;
  }

  @Override
  public void close() {
    ScheduledExecutorService s;
    synchronized (this) {
      s = sync;
    }
    if (s != null) {
      s.shutdownNow();
      try {
        s.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    store.flush();
    try {
      writeBackPending();
    } catch (RuntimeException e) {
      // reported below
    }
    long lost = pendingTokens();
    if (lost > 0) {
      log.error("The key store ({}) did not take {} tokens of per-key usage before stop; they are not counted",
          store.describe(), lost);
    }
    store.close();
  }
}
