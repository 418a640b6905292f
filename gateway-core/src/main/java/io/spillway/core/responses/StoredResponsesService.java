package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.UpstreamTarget;
import io.spillway.core.sse.ListedEventStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Answers the stored-state endpoints ({@link StoredQuery}): what the caller's team holds in the
 * response store from the store, the way OpenAI answers it; an id another team holds with OpenAI's
 * 404 for an unknown one (never asked of the cloud, which would answer any team under the gateway's
 * one key); everything else from the cloud (its first route), passed through as the client sent it.
 * Deleting a response the cloud issued deletes it there too. With the store off ({@code store}
 * null) every request is passed through.
 */
public final class StoredResponsesService implements Terminal {
  private final ResponseStore store;
  private final Backend cloud;

  /** @param store the response store, or null when {@code responses.enabled} is false */
  public StoredResponsesService(ResponseStore store, Backend cloud) {
    this.store = store;
    this.cloud = cloud;
  }

  @Override
  public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
    StoredQuery query = request.attribute(StoredQuery.KEY);
    if (store == null || query.kind() == StoredQuery.Kind.PASS_THROUGH) {
      return passThrough(request, query);
    }
    return Blocking.supply(() -> fromStore(request, query)).thenCompose(answer -> answer);
  }

  private CompletionStage<GatewayResponse> fromStore(GatewayRequest request, StoredQuery query) {
    Caller caller = request.attribute(RequestAttributes.CALLER);
    String team = caller.team();
    StoredResponse stored = store.get(team, query.id());
    if (stored == null) {
      if (store.heldByAnotherTeam(team, query.id())) {
        throw notFound(query.id());
      }
      return passThrough(request, query);
    }
    RequestOutcome.of(request).servedBy(StoredState.kindOf(stored.origin()));
    return switch (query.kind()) {
      case GET_RESPONSE -> CompletableFuture.completedFuture(
          streamAsked(query) ? replay(stored, query) : json(stored.response()));
      case INPUT_ITEMS -> CompletableFuture.completedFuture(json(inputItems(stored, query)));
      case DELETE_RESPONSE -> delete(request, query, stored, team);
      case PASS_THROUGH -> throw new IllegalStateException("passed through above");
    };
  }

  private CompletionStage<GatewayResponse> delete(GatewayRequest request, StoredQuery query, StoredResponse stored,
      String team) {
    store.delete(team, stored.id());
    ObjectNode deleted = Json.object().put("id", stored.id()).put("object", "response").put("deleted", true);
    if (StoredState.kindOf(stored.origin()) == BackendKind.LOCAL) {
      return CompletableFuture.completedFuture(json(deleted));
    }
    // The cloud issued it: it forgets it too, and its answer (a 404 if it had already) stands.
    return passThrough(request, query);
  }

  /** Whether {@code stream=true} asks for the response as a stream; 400 for a value that is no boolean. */
  static boolean streamAsked(StoredQuery query) {
    String stream = query.parameter("stream");
    if (stream == null || stream.equals("false")) {
      return false;
    }
    if (stream.equals("true")) {
      return true;
    }
    throw GatewayException.invalid("Invalid 'stream': expected a boolean (true or false).", "stream");
  }

  /**
   * The stored response as the stream the Responses API sends ({@link StoredStreamReplay}), the
   * events after {@code starting_after} when given.
   */
  private static GatewayResponse replay(StoredResponse stored, StoredQuery query) {
    long startingAfter = -1;
    String after = query.parameter("starting_after");
    if (after != null) {
      startingAfter = after.matches("\\d{1,18}") ? Long.parseLong(after) : -1;
      if (startingAfter < 0) {
        throw GatewayException.invalid(
            "Invalid 'starting_after': expected a sequence number (an integer of 0 or more).", "starting_after");
      }
    }
    Headers headers = Headers.builder().set("content-type", GatewayResponse.EVENT_STREAM)
        .set("cache-control", "no-cache").build();
    return GatewayResponse.streamed(200, headers,
        new ListedEventStream(StoredStreamReplay.of(stored.response(), startingAfter)));
  }

  /** The input items, as OpenAI lists them: newest first unless {@code order=asc}, {@code limit} (20), {@code after}. */
  static ObjectNode inputItems(StoredResponse stored, StoredQuery query) {
    List<JsonNode> items = new ArrayList<>();
    stored.input().forEach(items::add);
    if (!"asc".equals(query.parameter("order"))) {
      java.util.Collections.reverse(items);
    }
    String after = query.parameter("after");
    if (after != null) {
      int at = -1;
      for (int i = 0; i < items.size(); i++) {
        if (after.equals(Json.text(items.get(i), "id"))) {
          at = i;
          break;
        }
      }
      items = at < 0 ? List.of() : items.subList(at + 1, items.size());
    }
    int limit = 20;
    String asked = query.parameter("limit");
    if (asked != null) {
      try {
        limit = Math.max(1, Math.min(100, Integer.parseInt(asked)));
      } catch (NumberFormatException e) {
        throw GatewayException.invalid("Invalid 'limit': expected an integer between 1 and 100.", "limit");
      }
    }
    List<JsonNode> page = items.subList(0, Math.min(limit, items.size()));
    ObjectNode list = Json.object();
    list.put("object", "list");
    ArrayNode data = list.putArray("data");
    page.forEach(data::add);
    if (page.isEmpty()) {
      list.putNull("first_id");
      list.putNull("last_id");
    } else {
      list.put("first_id", Json.text(page.get(0), "id"));
      list.put("last_id", Json.text(page.get(page.size() - 1), "id"));
    }
    list.put("has_more", items.size() > page.size());
    return list;
  }

  private CompletionStage<GatewayResponse> passThrough(GatewayRequest request, StoredQuery query) {
    if (cloud == null) {
      throw query.kind() == StoredQuery.Kind.PASS_THROUGH
          ? new GatewayException(ErrorKind.NOT_FOUND, "No cloud route serves " + query.path() + ".", null,
              ErrorKind.NOT_FOUND.code(), null, null)
          : notFound(query.id());
    }
    request.setAttribute(UpstreamTarget.KEY, new UpstreamTarget(query.method(), query.upstreamPath(), query.body()));
    RequestOutcome.of(request).servedBy(BackendKind.CLOUD);
    return cloud.callAsync(request);
  }

  private static GatewayResponse json(JsonNode body) {
    return GatewayResponse.json(200, Json.toBytes(body));
  }

  /** OpenAI's answer to a response id it does not hold. */
  static GatewayException notFound(String id) {
    return new GatewayException(ErrorKind.NOT_FOUND, "Response with id '" + id + "' not found.", null, null,
        null, null);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }
}
