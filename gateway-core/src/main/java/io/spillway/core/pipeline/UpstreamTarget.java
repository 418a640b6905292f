package io.spillway.core.pipeline;

/**
 * A request passed through to a cloud route as the client sent it, to a path no {@link Route} names
 * ({@code GET /v1/responses/{id}}, the Conversations API): the method, the path below the route's
 * base URL (with the query string) and the body. An OpenAI-compatible backend that finds it on a
 * request sends exactly this instead of the route's own call.
 *
 * @param path below the base URL that ends in {@code /v1}, e.g. {@code /responses/resp_1?include=x}
 * @param body the client's body, or null
 */
public record UpstreamTarget(String method, String path, byte[] body) {
  public static final Attribute<UpstreamTarget> KEY = Attribute.of("upstreamTarget");
}
