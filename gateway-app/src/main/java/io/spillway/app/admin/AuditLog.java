package io.spillway.app.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
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
 * request id, and the action's own non-secret details. Never a key, a hash or the token.
 * Thread-safe.
 */
public final class AuditLog {
  public static final String LOGGER = "spillway.audit";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private final String who;
  private final Clock clock;

  public AuditLog(String adminToken, Clock clock) {
    this.who = adminToken == null ? "none" : "admin-token:" + fingerprint(adminToken);
    this.clock = clock;
  }

  /** Writes one line for {@code action}; {@code details} adds the action's own fields. */
  public void record(ServerRequest request, String action, Consumer<ObjectNode> details) {
    ObjectNode line = Json.object();
    line.put("at", clock.instant().toString());
    line.put("action", action);
    line.put("who", who);
    line.put("from", request.remoteAddress());
    line.put("requestId", request.requestId());
    details.accept(line);
    log.info("{}", Json.toString(line));
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
