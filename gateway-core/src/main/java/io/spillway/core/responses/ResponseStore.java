package io.spillway.core.responses;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Where Spillway keeps Responses API exchanges ({@link StoredResponse}), so that a conversation that
 * relies on stored state continues on whichever backend serves its next turn. Implementations live
 * where the usage store lives: in memory, in a file beside the usage file ({@code embedded:<dir>}),
 * or in Redis ({@code redis://…}, shared by every replica).
 *
 * <p>Everything is scoped to a team: a team reads, continues and deletes only what was stored for
 * it. Each team's responses are bounded by size ({@code responses.maxBytesPerTeam}: past it the
 * oldest are forgotten first) and by age ({@code responses.ttl}). Thread-safe; calls may block
 * ({@link #blocks()}): a Redis round trip, bounded by {@code quota.storeTimeout}, that throws
 * {@link io.spillway.core.error.GatewayException} (503) when Redis does not answer.
 */
public interface ResponseStore extends AutoCloseable {
  /** Keeps {@code response} for {@code team}, replacing one with the same id. */
  void put(String team, StoredResponse response);

  /** The team's response with {@code id}, or null (never stored, expired, forgotten, or another team's). */
  StoredResponse get(String team, String id);

  /** The team's responses with these ids, in their order, those it does not hold left out. */
  List<StoredResponse> getAll(String team, List<String> ids);

  /** For each of {@code itemIds} the team holds, the id of the response that holds it. */
  Map<String, String> responsesOfItems(String team, Collection<String> itemIds);

  /** Whether another team than {@code team} holds a response with {@code id}. */
  boolean heldByAnotherTeam(String team, String id);

  /** Forgets the team's response with {@code id}; false when it held none. */
  boolean delete(String team, String id);

  /** Whether calls may block the calling thread on I/O (a network round trip). */
  boolean blocks();

  /** For logs and status: {@code memory}, {@code embedded:<file>}, {@code redis host:port}. */
  String describe();

  @Override
  void close();
}
