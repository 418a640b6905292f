package io.spillway.local.context;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.local.context.Entry.Kind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The messages of a chat request, or the input items of a Responses request, read as an agent's
 * conversation: each entry knows its kind, and entries are grouped into <em>units</em> that are kept
 * or dropped as one. A unit is a single message, or a tool-calling turn together with every output
 * answering one of its calls (wherever in the list those outputs are), with the reasoning items that
 * led to it. So a call is never separated from its output.
 *
 * <p>The entries wrap the nodes of the array given (edits go straight into it). Not thread-safe.
 */
final class Conversation {
  final ArrayNode array;
  final List<Entry> entries;
  final int units;

  private Conversation(ArrayNode array, List<Entry> entries) {
    this.array = array;
    this.entries = entries;
    this.units = group(entries);
  }

  /** Chat Completions {@code messages}. */
  static Conversation ofChat(ArrayNode messages) {
    List<Entry> entries = new ArrayList<>(messages.size());
    for (JsonNode message : messages) {
      if (!(message instanceof ObjectNode node)) {
        entries.add(new Entry(Json.object(), Kind.OTHER, List.of(), null));
        continue;
      }
      String role = node.path("role").asText("");
      entries.add(switch (role) {
        case "system", "developer" -> new Entry(node, Kind.INSTRUCTION, List.of(), "content");
        case "user" -> new Entry(node, Kind.USER, List.of(), "content");
        case "assistant" -> {
          List<String> ids = new ArrayList<>();
          for (JsonNode call : node.path("tool_calls")) {
            ids.add(call.path("id").asText(""));
          }
          String legacy = node.path("function_call").path("name").asText(null);
          if (legacy != null) {
            ids.add("function:" + legacy);
          }
          yield new Entry(node, ids.isEmpty() ? Kind.ASSISTANT : Kind.CALL, ids, "content");
        }
        case "tool" -> new Entry(node, Kind.OUTPUT, List.of(node.path("tool_call_id").asText("")), "content");
        case "function" -> new Entry(node, Kind.OUTPUT, List.of("function:" + node.path("name").asText("")), "content");
        default -> new Entry(node, Kind.OTHER, List.of(), null);
      });
    }
    return new Conversation(messages, entries);
  }

  /** Responses API {@code input} items. */
  static Conversation ofResponses(ArrayNode input) {
    List<Entry> entries = new ArrayList<>(input.size());
    for (JsonNode item : input) {
      if (!(item instanceof ObjectNode node)) {
        entries.add(new Entry(Json.object(), Kind.OTHER, List.of(), null));
        continue;
      }
      String type = node.path("type").asText("message");
      String callId = node.path("call_id").asText(null);
      if (type.equals("message")) {
        String role = node.path("role").asText("");
        Kind kind = switch (role) {
          case "system", "developer" -> Kind.INSTRUCTION;
          case "user" -> Kind.USER;
          case "assistant" -> Kind.ASSISTANT;
          default -> Kind.OTHER;
        };
        entries.add(new Entry(node, kind, List.of(), "content"));
      } else if (callId != null && type.endsWith("_output")) {
        entries.add(new Entry(node, Kind.OUTPUT, List.of(callId), "output"));
      } else if (callId != null) {
        entries.add(new Entry(node, Kind.CALL, List.of(callId), null));
      } else {
        entries.add(new Entry(node, Kind.OTHER, List.of(), null));
      }
    }
    return new Conversation(input, entries);
  }

  /**
   * Numbers the units: outputs join the unit of their call; calls right after calls (parallel
   * calls) share one; reasoning and other items with no call join the unit of the item after them
   * when that is a call. Returns how many units there are.
   */
  private static int group(List<Entry> entries) {
    Map<String, Integer> unitOfCall = new HashMap<>();
    List<Entry> waiting = new ArrayList<>();
    int next = 0;
    Entry previous = null;
    for (Entry entry : entries) {
      int unit = -1;
      if (entry.kind == Kind.OUTPUT) {
        for (String id : entry.callIds) {
          Integer known = unitOfCall.get(id);
          if (known != null) {
            unit = known;
          }
        }
      } else if (entry.kind == Kind.CALL && previous != null && previous.kind == Kind.CALL && waiting.isEmpty()) {
        unit = previous.unit;
      }
      if (entry.kind == Kind.OTHER && entry.node.path("type").asText("").equals("reasoning")) {
        waiting.add(entry);
        continue;
      }
      if (unit < 0) {
        unit = next++;
      }
      entry.unit = unit;
      for (Entry held : waiting) {
        held.unit = entry.kind == Kind.CALL || entry.kind == Kind.OUTPUT ? unit : next++;
      }
      waiting.clear();
      if (entry.kind == Kind.CALL) {
        for (String id : entry.callIds) {
          unitOfCall.put(id, unit);
        }
      }
      previous = entry;
    }
    for (Entry held : waiting) {
      held.unit = next++;
    }
    return next;
  }

  /** The last user message, or null. */
  Entry latestUser() {
    for (int i = entries.size() - 1; i >= 0; i--) {
      if (entries.get(i).kind == Kind.USER) {
        return entries.get(i);
      }
    }
    return null;
  }

  /** The unit of the last entry, or -1 for an empty conversation. */
  int finalUnit() {
    return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).unit;
  }

  /** Removes the dropped entries from the array. */
  void removeDropped() {
    for (int i = entries.size() - 1; i >= 0; i--) {
      if (entries.get(i).dropped) {
        array.remove(i);
      }
    }
  }
}
