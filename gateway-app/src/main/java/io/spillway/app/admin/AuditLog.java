package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.http.ServerRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JSON line per admin action that changes something (key created, rotated or revoked, breaker
 * override, config reload, cache purge), on the logger {@value #LOGGER}: {@code at} (from the
 * gateway's clock), {@code action}, {@code who} (the admin token's fingerprint:
 * {@code admin-token:<first 4 bytes of its SHA-256>}), {@code from} (the client's address), the
 * request id, and the action's own non-secret details. Never a key, a hash or the token. The
 * fingerprint follows config reloads ({@code admin.token}); a reload by {@code SIGHUP} is recorded
 * with {@code who: "signal:SIGHUP"} and {@code from: "local"}. Thread-safe.
 */
public final class AuditLog implements Reloadable {
  public static final String LOGGER = "spillway.audit";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private volatile String who;
  private final Clock clock;

  public AuditLog(String adminToken, Clock clock) {
    this.who = who(adminToken);
    this.clock = clock;
  }

  private static String who(String adminToken) {
    return adminToken == null ? "none" : "admin-token:" + fingerprint(adminToken);
  }

  /** Who an admin request is made by now: the current admin token's fingerprint. */
  public String who() {
    return who;
  }

  /** Writes one line for {@code action}; {@code details} adds the action's own fields. */
  public void record(ServerRequest request, String action, Consumer<ObjectNode> details) {
    record(who, request.remoteAddress(), request.requestId(), action, details);
  }

  /**
   * Writes one line for {@code action} by {@code who} (an admin token's fingerprint, as {@link #who()}
   * gave it, or {@code signal:SIGHUP}) from {@code from}; {@code requestId} may be null.
   */
  public void record(String who, String from, String requestId, String action, Consumer<ObjectNode> details) {
    ObjectNode line = Json.object();
    line.put("at", clock.instant().toString());
    line.put("action", action);
    line.put("who", who);
    line.put("from", from);
    if (requestId != null) {
      line.put("requestId", requestId);
    }
    details.accept(line);
    log.info("{}", Json.toString(line));
  }

  /** A new admin token: admin actions are attributed to its fingerprint from now on. */
  @Override
  public void reload(GatewayConfig next) {
    who = who(next.admin().token());
  }

  @Override
  public String toString() {
    return "audit log";
  }

  private static String fingerprint(String token) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
