package io.spillway.app.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.Durations;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.http.ServerRequest;
import io.spillway.quota.keys.ApiKey;
import io.spillway.quota.keys.ApiKeys;
import io.spillway.quota.keys.KeyRegistry;
import io.spillway.quota.keys.KeyStoreUnavailableException;
import io.spillway.quota.pool.QuotaCalendar;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Key management, behind the admin token:
 * <ul>
 *   <li>{@code GET /admin/keys}: every key, config-file keys first (team, tier, fingerprint) and then
 *       keys created through the API (id, team, tier, limits, expiry, tokens used this month). Never a
 *       key or a full hash.</li>
 *   <li>{@code POST /admin/keys} with {@code {"team","tier"}} and optionally {@code expiresAt} (an
 *       ISO-8601 instant) or {@code expiresIn} ({@code 30d}), {@code models}, {@code monthlyTokens},
 *       {@code requestsPerMinute}: creates a key and answers {@code {"id","key",…}}, the only time
 *       the plain key is shown.</li>
 *   <li>{@code DELETE /admin/keys/{id}}: revokes it, on every replica within
 *       {@code admin.keySyncInterval}.</li>
 *   <li>{@code POST /admin/keys/{id}/rotate} with optional {@code {"overlap":"10m"}}: a new secret;
 *       the old one keeps working for the overlap ({@code admin.rotationOverlap} by default).</li>
 * </ul>
 * Config-file keys cannot be revoked or rotated here (403 {@code config_key}): they change with the
 * file. Each change writes an {@link AuditLog} line.
 */
public final class KeysEndpoint {
  public static final String PATH = "/admin/keys";
  private static final Set<String> CREATE_FIELDS = Set.of("team", "tier", "expiresAt", "expiresIn", "expiry",
      "models", "monthlyTokens", "budget", "requestsPerMinute");

  private final Supplier<KeyRegistry> configKeys;
  private final ApiKeys apiKeys;
  private final AuditLog audit;
  private final Clock clock;
  /** The longest a rotation's overlap may be: a year. */
  static final Duration MAX_OVERLAP = Duration.ofDays(366);
  /** The furthest ahead a key may expire: a hundred years. */
  static final Duration MAX_EXPIRY = Duration.ofDays(36_525);

  private final Supplier<Duration> defaultOverlap;
  private final Supplier<QuotaCalendar> calendar;
  /** A key id as the access log writes it. */
  private final UnaryOperator<String> logIds;

  /** {@code defaultOverlap} is read at each rotation ({@code admin.rotationOverlap}, which follows reloads). */
  public KeysEndpoint(Supplier<KeyRegistry> configKeys, ApiKeys apiKeys, AuditLog audit, Clock clock,
      Supplier<Duration> defaultOverlap, Supplier<QuotaCalendar> calendar, UnaryOperator<String> logIds) {
    this.logIds = logIds;
    this.configKeys = configKeys;
    this.apiKeys = apiKeys;
    this.audit = audit;
    this.clock = clock;
    this.defaultOverlap = defaultOverlap;
    this.calendar = calendar;
  }

  /** Registers the key routes on {@code admin}. */
  public void register(AdminApi.Builder admin) {
    admin.get(PATH, this::list);
    admin.post(PATH, this::create);
    admin.prefix(PATH + "/", PATH + "/{id}", this::byId);
  }

  private GatewayResponse list(ServerRequest request) {
    ObjectNode root = Json.object();
    ArrayNode list = root.putArray("keys");
    KeyRegistry registry = configKeys.get();
    for (Caller caller : registry.callers()) {
      ObjectNode entry = list.addObject()
          .put("id", caller.keyId())
          .put("source", "config")
          .put("team", caller.team())
          .put("tier", caller.tier().tag())
          .put("fingerprint", caller.keyId())
          .put("logId", logIds.apply(caller.keyId()));
      List<String> models = registry.models(caller);
      if (!models.isEmpty()) {
        models.forEach(entry.putArray("models")::add);
      }
    }
    String month = calendar.get().month().toString();
    for (ApiKey key : apiKeys.list()) {
      ObjectNode entry = describe(list.addObject(), key);
      try {
        entry.put("usedTokens", apiKeys.used(month, key.id()));
      } catch (KeyStoreUnavailableException e) {
        entry.putNull("usedTokens");
      }
    }
    return AdminApi.ok(root);
  }

  private GatewayResponse create(ServerRequest request) {
    JsonNode body = AdminApi.jsonBody(request);
    body.fieldNames().forEachRemaining(field -> {
      if (!CREATE_FIELDS.contains(field)) {
        throw GatewayException.invalid("Unknown field '" + field + "'; a key takes " + CREATE_FIELDS, field);
      }
    });
    ApiKeys.NewKey spec = new ApiKeys.NewKey(team(body), tier(body), expiry(body), models(body),
        budget(body), positiveInt(body, "requestsPerMinute"));
    ApiKeys.Issued issued = guarded(() -> apiKeys.create(spec));
    audit.record(request, "key.create", line -> describe(line.putObject("key"), issued.key()));
    ObjectNode answer = Json.object();
    answer.put("id", issued.key().id());
    answer.put("key", issued.secret());
    describe(answer, issued.key());
    answer.put("note", "Store this key now: Spillway keeps only its hash and cannot show it again.");
    return AdminApi.ok(answer);
  }

  private GatewayResponse byId(ServerRequest request) {
    String rest = request.path().substring(PATH.length() + 1);
    boolean rotate = rest.endsWith("/rotate");
    String id = rotate ? rest.substring(0, rest.length() - "/rotate".length()) : rest;
    if (id.isEmpty() || id.contains("/")) {
      throw ErrorKind.NOT_FOUND.exception("Unknown path " + request.path()
          + "; key routes are /admin/keys/{id} (DELETE) and /admin/keys/{id}/rotate (POST)");
    }
    String method = request.method();
    if (rotate && method.equals("POST")) {
      return rotate(request, id);
    }
    if (!rotate && method.equals("DELETE")) {
      return revoke(request, id);
    }
    throw ErrorKind.METHOD_NOT_ALLOWED.exception("Method " + method + " is not allowed on "
        + request.path() + " (allowed: " + (rotate ? "POST" : "DELETE") + ")");
  }

  private GatewayResponse revoke(ServerRequest request, String id) {
    refuseConfigKey(id, "revoked");
    ApiKey key = guarded(() -> apiKeys.find(id));
    if (key == null || !guarded(() -> apiKeys.revoke(id))) {
      throw notFound(id);
    }
    audit.record(request, "key.revoke", line -> line.put("id", id).put("team", key.team())
        .put("tier", key.tier().tag()));
    ObjectNode answer = Json.object();
    answer.put("id", id);
    answer.put("revoked", true);
    return AdminApi.ok(answer);
  }

  private GatewayResponse rotate(ServerRequest request, String id) {
    refuseConfigKey(id, "rotated");
    Duration overlap = defaultOverlap.get();
    if (request.body().length > 0) {
      JsonNode body = AdminApi.jsonBody(request);
      JsonNode given = body.get("overlap");
      if (given != null && !given.isNull() && !given.isTextual()) {
        throw GatewayException.invalid("'overlap' must be a duration such as 10m or 12h", "overlap");
      }
      String text = Json.text(body, "overlap");
      if (text != null) {
        overlap = duration(text, "overlap");
        if (overlap.isNegative()) {
          throw GatewayException.invalid("'overlap' must not be negative", "overlap");
        }
        if (overlap.compareTo(MAX_OVERLAP) > 0) {
          throw GatewayException.invalid("'overlap' must be at most " + Durations.format(MAX_OVERLAP), "overlap");
        }
      }
    }
    Duration chosen = overlap;
    ApiKeys.Issued issued = guarded(() -> apiKeys.rotate(id, chosen));
    if (issued == null) {
      throw notFound(id);
    }
    audit.record(request, "key.rotate", line -> line.put("id", id).put("team", issued.key().team())
        .put("overlap", Durations.format(chosen)).put("previousKeyValidUntil", issued.key().previousUntil().toString()));
    ObjectNode answer = Json.object();
    answer.put("id", id);
    answer.put("key", issued.secret());
    answer.put("previousKeyValidUntil", issued.key().previousUntil().toString());
    answer.put("note", "Store this key now: Spillway keeps only its hash and cannot show it again.");
    return AdminApi.ok(answer);
  }

  private void refuseConfigKey(String id, String what) {
    for (Caller caller : configKeys.get().callers()) {
      if (caller.keyId().equals(id)) {
        throw ErrorKind.FORBIDDEN.exception("Key " + id + " (team " + caller.team()
            + ") comes from the config file and cannot be " + what + " through the API: change it under"
            + " 'keys:' in the config and reload (POST /admin/reload).").withCode("config_key");
      }
    }
  }

  private static ObjectNode describe(ObjectNode node, ApiKey key) {
    node.put("id", key.id());
    node.put("source", "api");
    node.put("team", key.team());
    node.put("tier", key.tier().tag());
    node.put("createdAt", key.createdAt().toString());
    if (key.expiresAt() != null) {
      node.put("expiresAt", key.expiresAt().toString());
    }
    ArrayNode models = node.putArray("models");
    key.models().forEach(models::add);
    if (key.monthlyTokens() != null) {
      node.put("monthlyTokens", key.monthlyTokens());
    }
    if (key.requestsPerMinute() != null) {
      node.put("requestsPerMinute", key.requestsPerMinute());
    }
    if (key.previousUntil() != null) {
      node.put("previousKeyValidUntil", key.previousUntil().toString());
    }
    return node;
  }

  private static GatewayException notFound(String id) {
    return ErrorKind.NOT_FOUND.exception("No key with id '" + printable(id) + "'").withCode("key_not_found");
  }

  private static <T> T guarded(Supplier<T> operation) {
    try {
      return operation.get();
    } catch (KeyStoreUnavailableException e) {
      throw ErrorKind.UNAVAILABLE.exception("The key store is unavailable: " + e.getMessage())
          .withRetryAfter(Duration.ofSeconds(1));
    }
  }

  private static String team(JsonNode body) {
    JsonNode team = body.get("team");
    if (team == null || !team.isTextual() || team.textValue().isBlank() || team.textValue().length() > 64
        || team.textValue().chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw GatewayException.invalid("'team' must be a name of 1 to 64 printable characters", "team");
    }
    return team.textValue();
  }

  private static Tier tier(JsonNode body) {
    String tier = Json.text(body, "tier");
    try {
      return Tier.parse(tier == null ? "" : tier);
    } catch (IllegalArgumentException e) {
      throw GatewayException.invalid("'tier' must be gold, silver or bronze", "tier");
    }
  }

  /** {@code monthlyTokens}, or its short alias {@code budget}. */
  private static Long budget(JsonNode body) {
    if (body.has("monthlyTokens") && body.has("budget")) {
      throw GatewayException.invalid("Give 'monthlyTokens' or its alias 'budget', not both", "budget");
    }
    return positiveLong(body, body.has("budget") ? "budget" : "monthlyTokens");
  }

  /** {@code expiresAt} (or its alias {@code expiry}), an instant; or {@code expiresIn}, a duration from now. */
  private Instant expiry(JsonNode body) {
    String atField = body.has("expiry") ? "expiry" : "expiresAt";
    JsonNode atNode = body.get(atField);
    Instant latest = clock.instant().plus(MAX_EXPIRY);
    if (atNode != null && atNode.isNumber() && !atNode.isIntegralNumber()) {
      throw GatewayException.invalid("'" + atField + "' must be whole seconds since the epoch or an ISO-8601 instant",
          atField);
    }
    if (atNode != null && atNode.isIntegralNumber()
        && (!atNode.canConvertToLong() || atNode.longValue() > latest.getEpochSecond())) {
      throw GatewayException.invalid("'" + atField + "' is too far ahead: a key expires at most "
          + MAX_EXPIRY.toDays() + " days from now", atField);
    }
    if (atNode != null && atNode.isIntegralNumber() && atNode.longValue() <= clock.instant().getEpochSecond()) {
      throw GatewayException.invalid("'" + atField + "' must be in the future", atField);
    }
    String at = atNode != null && atNode.isIntegralNumber()
        ? Instant.ofEpochSecond(atNode.longValue()).toString() : Json.text(body, atField);
    String in = Json.text(body, "expiresIn");
    for (String field : List.of(atField, "expiresIn")) {
      JsonNode value = body.get(field);
      if (value != null && !value.isNull() && !value.isTextual() && !(field.equals(atField) && value.isIntegralNumber())) {
        throw GatewayException.invalid("'" + field + "' must be a string", field);
      }
    }
    int given = (body.has("expiry") ? 1 : 0) + (body.has("expiresAt") ? 1 : 0) + (body.has("expiresIn") ? 1 : 0);
    if (given > 1) {
      throw GatewayException.invalid("Give one of 'expiresAt', 'expiry' and 'expiresIn'", "expiresAt");
    }
    Instant now = clock.instant();
    Instant expiry = null;
    if (at != null) {
      try {
        expiry = Instant.parse(at);
      } catch (DateTimeParseException e) {
        throw GatewayException.invalid("'" + atField + "' must be an ISO-8601 instant such as 2027-01-31T00:00:00Z"
            + " (or seconds since the epoch)", atField);
      }
    } else if (in != null) {
      Duration after = duration(in, "expiresIn");
      if (after.compareTo(MAX_EXPIRY) > 0) {
        throw GatewayException.invalid("'expiresIn' is too long: a key expires at most " + MAX_EXPIRY.toDays()
            + " days from now", "expiresIn");
      }
      expiry = now.plus(after);
    }
    if (expiry != null && expiry.isAfter(latest)) {
      throw GatewayException.invalid("'" + (at != null ? atField : "expiresIn") + "' is too far ahead: a key"
          + " expires at most " + MAX_EXPIRY.toDays() + " days from now", at != null ? atField : "expiresIn");
    }
    if (expiry != null && !expiry.isAfter(now)) {
      String field = at != null ? atField : "expiresIn";
      throw GatewayException.invalid("'" + field + "' must be in the future", field);
    }
    return expiry;
  }

  private static Duration duration(String text, String field) {
    try {
      return Durations.parse(text);
    } catch (RuntimeException e) {
      throw GatewayException.invalid("'" + field + "' must be a duration such as 90s, 10m, 12h or 30d", field);
    }
  }

  private static List<String> models(JsonNode body) {
    JsonNode models = body.get("models");
    if (models == null || models.isNull()) {
      return List.of();
    }
    if (!models.isArray()) {
      throw GatewayException.invalid("'models' must be an array of model names", "models");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode model : models) {
      if (!model.isTextual() || model.textValue().isBlank()) {
        throw GatewayException.invalid("'models' must be an array of model names", "models");
      }
      out.add(model.textValue());
    }
    return out;
  }

  private static Long positiveLong(JsonNode body, String field) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < 1) {
      throw GatewayException.invalid("'" + field + "' must be a positive integer", field);
    }
    return value.longValue();
  }

  private static Integer positiveInt(JsonNode body, String field) {
    Long value = positiveLong(body, field);
    if (value != null && value > Integer.MAX_VALUE) {
      throw GatewayException.invalid("'" + field + "' is too large", field);
    }
    return value == null ? null : value.intValue();
  }

  private static String printable(String value) {
    StringBuilder out = new StringBuilder();
    value.chars().limit(100).forEach(c -> out.append(c >= 0x20 && c < 0x7f ? (char) c : '?'));
    return out.toString();
  }
}
