package io.spillway.quota.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Tier;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A key created through {@code POST /admin/keys}, as the key store keeps it: its SHA-256 hash (never
 * the key), who it names, and its limits. Immutable.
 *
 * @param id the public, non-secret identity ({@code key_…}): what the admin API, the access log
 *     ({@code keyId}) and the per-key limits use
 * @param hash {@code sha256:<hex>} of the current secret
 * @param expiresAt when the key stops working; null for never
 * @param models the models the key may ask for; empty for any
 * @param monthlyTokens the key's own token budget per quota month; null for none (the tier's pool
 *     still applies)
 * @param requestsPerMinute the key's own request limit; null for none (the tier's limits still apply)
 * @param previousHash the secret before the last rotation, accepted until {@code previousUntil}
 * @param earlier secrets of rotations before the last whose overlap has not ended yet: a second
 *     rotation does not cut the first one's overlap short
 */
public record ApiKey(
    String id,
    String team,
    Tier tier,
    String hash,
    Instant createdAt,
    Instant expiresAt,
    List<String> models,
    Long monthlyTokens,
    Integer requestsPerMinute,
    String previousHash,
    Instant previousUntil,
    List<PreviousSecret> earlier) {

  /** A secret replaced by a rotation, accepted until {@code until}. */
  public record PreviousSecret(String hash, Instant until) {}

  public ApiKey {
    models = models == null ? List.of() : List.copyOf(models);
    earlier = earlier == null ? List.of() : List.copyOf(earlier);
  }

  /** A key with at most one previous secret. */
  public ApiKey(String id, String team, Tier tier, String hash, Instant createdAt, Instant expiresAt,
      List<String> models, Long monthlyTokens, Integer requestsPerMinute, String previousHash, Instant previousUntil) {
    this(id, team, tier, hash, createdAt, expiresAt, models, monthlyTokens, requestsPerMinute, previousHash,
        previousUntil, List.of());
  }

  /** Every secret a rotation replaced that is still accepted at some time: the last one first. */
  public List<PreviousSecret> previousSecrets() {
    List<PreviousSecret> all = new ArrayList<>();
    if (previousHash != null) {
      all.add(new PreviousSecret(previousHash, previousUntil));
    }
    all.addAll(earlier);
    return all;
  }

  public boolean expired(Instant now) {
    return expiresAt != null && !now.isBefore(expiresAt);
  }

  /** Whether the key may ask for {@code model} (any model when the allow-list is empty). */
  public boolean allows(String model) {
    return models.isEmpty() || models.contains(model);
  }

  /**
   * This key with a new secret; the old one keeps working until {@code previousUntil}, and secrets of
   * earlier rotations keep working until their own ends (those already over at {@code now} are dropped).
   */
  public ApiKey rotated(String newHash, Instant previousUntil, Instant now) {
    List<PreviousSecret> kept = new ArrayList<>();
    for (PreviousSecret secret : previousSecrets()) {
      if (now.isBefore(secret.until())) {
        kept.add(secret);
      }
    }
    return new ApiKey(id, team, tier, newHash, createdAt, expiresAt, models, monthlyTokens, requestsPerMinute,
        hash, previousUntil, kept);
  }

  /** The stored form: JSON with the hash, never a secret. */
  public String toStored() {
    ObjectNode node = Json.object();
    node.put("id", id).put("team", team).put("tier", tier.tag()).put("hash", hash)
        .put("createdAt", createdAt.toString());
    if (expiresAt != null) {
      node.put("expiresAt", expiresAt.toString());
    }
    ArrayNode list = node.putArray("models");
    models.forEach(list::add);
    if (monthlyTokens != null) {
      node.put("monthlyTokens", monthlyTokens);
    }
    if (requestsPerMinute != null) {
      node.put("requestsPerMinute", requestsPerMinute);
    }
    if (previousHash != null) {
      node.put("previousHash", previousHash).put("previousUntil", previousUntil.toString());
    }
    if (!earlier.isEmpty()) {
      ArrayNode older = node.putArray("earlier");
      earlier.forEach(secret -> older.addObject().put("hash", secret.hash()).put("until", secret.until().toString()));
    }
    return Json.toString(node);
  }

  public static ApiKey fromStored(String stored) {
    JsonNode node;
    try {
      node = Json.parse(stored.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("a stored key is not JSON", e);
    }
    List<String> models = new ArrayList<>();
    node.path("models").forEach(m -> models.add(m.asText()));
    List<PreviousSecret> earlier = new ArrayList<>();
    node.path("earlier").forEach(e -> earlier.add(new PreviousSecret(e.get("hash").asText(),
        Instant.parse(e.get("until").asText()))));
    return new ApiKey(
        node.get("id").asText(),
        node.get("team").asText(),
        Tier.parse(node.get("tier").asText()),
        node.get("hash").asText(),
        Instant.parse(node.get("createdAt").asText()),
        instant(node, "expiresAt"),
        models,
        node.hasNonNull("monthlyTokens") ? node.get("monthlyTokens").asLong() : null,
        node.hasNonNull("requestsPerMinute") ? node.get("requestsPerMinute").asInt() : null,
        node.hasNonNull("previousHash") ? node.get("previousHash").asText() : null,
        instant(node, "previousUntil"),
        earlier);
  }

  private static Instant instant(JsonNode node, String field) {
    return node.hasNonNull(field) ? Instant.parse(node.get(field).asText()) : null;
  }
}
