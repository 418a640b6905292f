package io.spillway.quota.responses;

import io.spillway.config.ResponsesConfig;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.responses.StoredResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * The response store of one gateway: an H2 MVStore, in a file ({@code <dir>/responses.mv.db}, beside
 * the usage file; survives a restart) or in memory ({@code store: memory}).
 *
 * <p>Maps: {@code responses} (team, id → the stored JSON), {@code items} (team, item id → response
 * id) and {@code owners} (id or item id → team, so another team's id is answered as unknown). Each
 * team's responses are also indexed in memory in the order they were stored, with their sizes, so
 * that the oldest are forgotten first past {@code responses.maxBytesPerTeam} and past
 * {@code responses.ttl}; the index is rebuilt from the file at open. MVStore commits in the
 * background about every second and on close, so a crash loses at most the last second's answers.
 * Thread-safe: writes are serialized.
 */
public final class MvResponseStore implements ResponseStore {
  static final String FILE_NAME = "responses.mv.db";
  private static final char SEP = '\u0000';

  private final MVStore mv;
  private final String description;
  private final MVMap<String, String> responses;
  private final MVMap<String, String> items;
  private final MVMap<String, String> owners;
  private final Map<String, TeamIndex> index = new HashMap<>();
  private final long maxBytes;
  private final long ttlMillis;
  private final Clock clock;

  /** A team's responses in the order stored: id → (stored at, bytes). */
  private static final class TeamIndex {
    final LinkedHashMap<String, long[]> entries = new LinkedHashMap<>();
    long bytes;
  }

  private MvResponseStore(MVStore mv, String description, ResponsesConfig config, Clock clock) {
    this.mv = mv;
    this.description = description;
    this.responses = mv.openMap("responses");
    this.items = mv.openMap("items");
    this.owners = mv.openMap("owners");
    this.maxBytes = config.maxBytesPerTeam().bytes();
    this.ttlMillis = config.ttl().toMillis();
    this.clock = clock;
    load();
  }

  /** A store in memory: nothing survives a restart. */
  public static MvResponseStore inMemory(ResponsesConfig config, Clock clock) {
    return new MvResponseStore(new MVStore.Builder().open(), "memory", config, clock);
  }

  /** Opens (or creates) {@code <dir>/responses.mv.db}. */
  public static MvResponseStore open(Path dir, ResponsesConfig config, Clock clock) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the response store directory " + dir, e);
    }
    Path file = dir.resolve(FILE_NAME);
    MVStore mv;
    try {
      mv = new MVStore.Builder().fileName(file.toString()).open();
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot open the response store " + file
          + " (is another gateway using the same directory?): " + e.getMessage(), e);
    }
    return new MvResponseStore(mv, "embedded:" + file, config, clock);
  }

  private void load() {
    List<Map.Entry<String, long[]>> all = new ArrayList<>();
    responses.forEach((key, json) -> {
      StoredResponse stored = StoredResponse.fromJson(json);
      all.add(Map.entry(key, new long[] {stored.storedAtMillis(), size(json)}));
    });
    all.sort((a, b) -> Long.compare(a.getValue()[0], b.getValue()[0]));
    for (Map.Entry<String, long[]> entry : all) {
      int at = entry.getKey().indexOf(SEP);
      TeamIndex team = index.computeIfAbsent(entry.getKey().substring(0, at), t -> new TeamIndex());
      team.entries.put(entry.getKey().substring(at + 1), entry.getValue());
      team.bytes += entry.getValue()[1];
    }
  }

  private static String key(String team, String id) {
    return team + SEP + id;
  }

  private static long size(String json) {
    return json.getBytes(StandardCharsets.UTF_8).length;
  }

  @Override
  public synchronized void put(String team, StoredResponse response) {
    String json = response.toJson();
    long now = clock.millis();
    TeamIndex teamIndex = index.computeIfAbsent(team, t -> new TeamIndex());
    forget(team, teamIndex, response.id());
    responses.put(key(team, response.id()), json);
    owners.put(response.id(), team);
    for (String itemId : response.itemIds()) {
      // The first response that held an item keeps it: a later one that carried it (a reference
      // resolved into its input) must not make it look issued by that later one's backend.
      items.putIfAbsent(key(team, itemId), response.id());
      owners.put(itemId, team);
    }
    long bytes = size(json);
    teamIndex.entries.put(response.id(), new long[] {now, bytes});
    teamIndex.bytes += bytes;
    Iterator<Map.Entry<String, long[]>> oldest = teamIndex.entries.entrySet().iterator();
    while (oldest.hasNext()) {
      Map.Entry<String, long[]> entry = oldest.next();
      boolean expired = entry.getValue()[0] <= now - ttlMillis;
      if (entry.getKey().equals(response.id()) || (!expired && teamIndex.bytes <= maxBytes)) {
        break;
      }
      oldest.remove();
      teamIndex.bytes -= entry.getValue()[1];
      remove(team, entry.getKey());
    }
  }

  /** Removes {@code id} from the index, if it is there, and from the maps. */
  private void forget(String team, TeamIndex teamIndex, String id) {
    long[] entry = teamIndex.entries.remove(id);
    if (entry != null) {
      teamIndex.bytes -= entry[1];
      remove(team, id);
    }
  }

  private void remove(String team, String id) {
    String json = responses.remove(key(team, id));
    if (team.equals(owners.get(id))) {
      owners.remove(id);
    }
    if (json != null) {
      for (String itemId : StoredResponse.fromJson(json).itemIds()) {
        if (id.equals(items.get(key(team, itemId)))) {
          items.remove(key(team, itemId));
          if (team.equals(owners.get(itemId))) {
            owners.remove(itemId);
          }
        }
      }
    }
  }

  @Override
  public StoredResponse get(String team, String id) {
    String json = responses.get(key(team, id));
    if (json == null) {
      return null;
    }
    StoredResponse stored = StoredResponse.fromJson(json);
    return stored.storedAtMillis() <= clock.millis() - ttlMillis ? null : stored;
  }

  @Override
  public List<StoredResponse> getAll(String team, List<String> ids) {
    List<StoredResponse> out = new ArrayList<>();
    for (String id : ids) {
      StoredResponse stored = get(team, id);
      if (stored != null) {
        out.add(stored);
      }
    }
    return out;
  }

  @Override
  public Map<String, String> responsesOfItems(String team, Collection<String> itemIds) {
    Map<String, String> out = new HashMap<>();
    for (String itemId : itemIds) {
      String responseId = items.get(key(team, itemId));
      if (responseId != null) {
        out.put(itemId, responseId);
      }
    }
    return out;
  }

  @Override
  public boolean heldByAnotherTeam(String team, String id) {
    String owner = owners.get(id);
    return owner != null && !owner.equals(team);
  }

  @Override
  public synchronized boolean delete(String team, String id) {
    TeamIndex teamIndex = index.get(team);
    if (teamIndex == null || !teamIndex.entries.containsKey(id)) {
      return false;
    }
    forget(team, teamIndex, id);
    return true;
  }

  @Override
  public boolean blocks() {
    return false;
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public synchronized void close() {
    if (!mv.isClosed()) {
      mv.close();
    }
  }
}
