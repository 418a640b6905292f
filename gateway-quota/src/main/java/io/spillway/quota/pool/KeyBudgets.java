package io.spillway.quota.pool;

/**
 * Per-key token budgets beside the tier pools: a key with a budget is refused (429
 * {@code insufficient_quota}) once its month's settled tokens plus the request's estimate would pass
 * it. Keys are named by {@link io.spillway.core.pipeline.Caller#keyId()}.
 */
public interface KeyBudgets {
  KeyBudgets NONE = new KeyBudgets() {
    @Override
    public Long monthlyTokens(String keyId) {
      return null;
    }

    @Override
    public long used(String month, String keyId) {
      return 0;
    }

    @Override
    public void add(String month, String keyId, long tokens) {}
  };

  /** The key's budget per quota month, or null when it has none. */
  Long monthlyTokens(String keyId);

  /** Tokens the key settled in {@code month}. */
  long used(String month, String keyId);

  /** Records settled tokens of the key (a key the budgets do not know is ignored). */
  void add(String month, String keyId, long tokens);
}
