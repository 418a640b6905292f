package io.spillway.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * A whole JSON answer told as the stream the client asked for, for upstreams that answer a stream
 * request with one JSON object (some OpenAI-compatible servers ignore {@code stream: true}). SDKs
 * reading a stream cannot parse a plain JSON body; they can parse this:
 *
 * <ul>
 *   <li>chat completions: per choice a chunk with the whole message as its delta (tool calls given
 *       their {@code index}) and a chunk with its {@code finish_reason}; then a usage chunk and
 *       {@code [DONE]};
 *   <li>completions: one chunk with the choices' text, a usage chunk, {@code [DONE]};
 *   <li>Responses API: {@code response.created}, one {@code response.output_text.delta} per text
 *       part, {@code response.completed} with the whole response.
 * </ul>
 *
 * Usage chunks are sent whether or not the client asked; the quota stage removes them for clients
 * that did not, as it does for upstream streams.
 */
final class AnswerAsStream {
  private AnswerAsStream() {}

  /** The events telling {@code answer} on {@code route}; null when the route has no stream form. */
  static EventStream of(Route route, JsonNode answer) {
    List<SseEvent> events = switch (route) {
      case CHAT_COMPLETIONS -> chat(answer);
      case COMPLETIONS -> completion(answer);
      case RESPONSES -> response(answer);
      default -> null;
    };
    return events == null ? null : new ListedEventStream(events);
  }

  private static List<SseEvent> chat(JsonNode answer) {
    List<SseEvent> events = new ArrayList<>();
    for (JsonNode choice : answer.path("choices")) {
      ObjectNode delta = choice.path("message").isObject()
          ? ((ObjectNode) choice.get("message")).deepCopy() : Json.object();
      if (delta.path("tool_calls").isArray()) {
        int index = 0;
        for (JsonNode call : delta.get("tool_calls")) {
          if (call.isObject()) {
            ((ObjectNode) call).put("index", index++);
          }
        }
      }
      ObjectNode first = chunk(answer, "chat.completion.chunk");
      ObjectNode part = first.putArray("choices").addObject();
      part.put("index", choice.path("index").asInt(0));
      part.set("delta", delta);
      part.set("logprobs", choice.path("logprobs").isMissingNode() ? Json.MAPPER.nullNode() : choice.get("logprobs"));
      part.putNull("finish_reason");
      events.add(SseEvent.data(Json.toString(first)));

      ObjectNode last = chunk(answer, "chat.completion.chunk");
      ObjectNode end = last.putArray("choices").addObject();
      end.put("index", choice.path("index").asInt(0));
      end.putObject("delta");
      end.set("finish_reason", choice.path("finish_reason").isMissingNode()
          ? Json.MAPPER.getNodeFactory().textNode("stop") : choice.get("finish_reason"));
      events.add(SseEvent.data(Json.toString(last)));
    }
    usage(answer, "chat.completion.chunk", events);
    events.add(SseEvent.DONE);
    return events;
  }

  private static List<SseEvent> completion(JsonNode answer) {
    List<SseEvent> events = new ArrayList<>();
    ObjectNode chunk = chunk(answer, "text_completion");
    chunk.set("choices", answer.path("choices").isArray() ? answer.get("choices").deepCopy() : Json.MAPPER.createArrayNode());
    events.add(SseEvent.data(Json.toString(chunk)));
    usage(answer, "text_completion", events);
    events.add(SseEvent.DONE);
    return events;
  }

  private static List<SseEvent> response(JsonNode answer) {
    List<SseEvent> events = new ArrayList<>();
    int sequence = 0;
    ObjectNode started = answer.deepCopy();
    started.put("status", "in_progress");
    started.putArray("output");
    started.putNull("usage");
    ObjectNode created = typed("response.created", sequence++);
    created.set("response", started);
    events.add(event(created));
    int outputIndex = 0;
    for (JsonNode item : answer.path("output")) {
      int contentIndex = 0;
      for (JsonNode part : item.path("content")) {
        if ("output_text".equals(part.path("type").asText()) && part.path("text").isTextual()) {
          ObjectNode delta = typed("response.output_text.delta", sequence++);
          delta.put("item_id", item.path("id").asText(""));
          delta.put("output_index", outputIndex);
          delta.put("content_index", contentIndex);
          delta.put("delta", part.get("text").textValue());
          delta.putArray("logprobs");
          events.add(event(delta));
        }
        contentIndex++;
      }
      outputIndex++;
    }
    String terminal = switch (answer.path("status").asText("completed")) {
      case "failed" -> "response.failed";
      case "incomplete" -> "response.incomplete";
      default -> "response.completed";
    };
    ObjectNode done = typed(terminal, sequence);
    done.set("response", answer);
    events.add(event(done));
    return events;
  }

  private static ObjectNode typed(String type, int sequence) {
    ObjectNode event = Json.object();
    event.put("type", type);
    event.put("sequence_number", sequence);
    return event;
  }

  private static SseEvent event(ObjectNode typed) {
    return new SseEvent(typed.get("type").textValue(), Json.toString(typed));
  }

  private static ObjectNode chunk(JsonNode answer, String object) {
    ObjectNode chunk = Json.object();
    chunk.set("id", answer.path("id").isMissingNode() ? Json.MAPPER.nullNode() : answer.get("id"));
    chunk.put("object", object);
    chunk.set("created", answer.path("created").isMissingNode() ? Json.MAPPER.nullNode() : answer.get("created"));
    chunk.set("model", answer.path("model").isMissingNode() ? Json.MAPPER.nullNode() : answer.get("model"));
    if (answer.has("system_fingerprint")) {
      chunk.set("system_fingerprint", answer.get("system_fingerprint"));
    }
    return chunk;
  }

  private static void usage(JsonNode answer, String object, List<SseEvent> events) {
    if (answer.path("usage").isObject()) {
      ObjectNode chunk = chunk(answer, object);
      chunk.putArray("choices");
      chunk.set("usage", answer.get("usage"));
      events.add(SseEvent.data(Json.toString(chunk)));
    }
  }
}
