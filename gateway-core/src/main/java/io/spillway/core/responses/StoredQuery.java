package io.spillway.core.responses;

import io.spillway.core.pipeline.Attribute;

/**
 * A request to the stored-state endpoints: {@code GET}/{@code DELETE /v1/responses/{id}},
 * {@code GET /v1/responses/{id}/input_items}, or anything else under {@code /v1/responses/} and
 * {@code /v1/conversations}, which is passed to the cloud as it came.
 *
 * @param kind what is asked
 * @param id the response id, or null for {@link Kind#PASS_THROUGH}
 * @param query the query string (without {@code ?}), or null
 */
public record StoredQuery(Kind kind, String method, String path, String id, String query, byte[] body) {
  public static final Attribute<StoredQuery> KEY = Attribute.of("storedQuery");

  public enum Kind {
    GET_RESPONSE,
    INPUT_ITEMS,
    DELETE_RESPONSE,
    PASS_THROUGH
  }

  static final String RESPONSES = "/v1/responses/";
  static final String CONVERSATIONS = "/v1/conversations";

  /** Reads {@code method} and {@code path}. */
  public static StoredQuery of(String method, String path, String query, byte[] body) {
    if (path.startsWith(RESPONSES)) {
      String rest = path.substring(RESPONSES.length());
      String[] parts = rest.split("/", -1);
      boolean read = "GET".equals(method) || "HEAD".equals(method);
      if (parts.length == 1 && read) {
        return new StoredQuery(Kind.GET_RESPONSE, method, path, parts[0], query, body);
      }
      if (parts.length == 1 && "DELETE".equals(method)) {
        return new StoredQuery(Kind.DELETE_RESPONSE, method, path, parts[0], query, body);
      }
      if (parts.length == 2 && "input_items".equals(parts[1]) && read) {
        return new StoredQuery(Kind.INPUT_ITEMS, method, path, parts[0], query, body);
      }
    }
    return new StoredQuery(Kind.PASS_THROUGH, method, path, null, query, body);
  }

  /** The path below a base URL that ends in {@code /v1}, with the query string. */
  public String upstreamPath() {
    return path.substring("/v1".length()) + (query == null || query.isEmpty() ? "" : "?" + query);
  }

  /** The value of query parameter {@code name}, or null. */
  public String parameter(String name) {
    if (query == null) {
      return null;
    }
    for (String pair : query.split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      if (key.equals(name)) {
        return eq < 0 ? "" : java.net.URLDecoder.decode(pair.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8);
      }
    }
    return null;
  }
}
