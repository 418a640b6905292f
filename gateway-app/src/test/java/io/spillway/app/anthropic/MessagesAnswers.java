package io.spillway.app.anthropic;

import static io.spillway.app.anthropic.AnthropicStubs.parse;

import java.util.ArrayList;
import java.util.List;

/** Reads a Messages API answer as a client sees it: its text, and a stream's event names in order. */
final class MessagesAnswers {
  private MessagesAnswers() {}

  /** The answer's text: a message's text blocks, or a stream's text deltas, joined. */
  static String text(String body) {
    StringBuilder text = new StringBuilder();
    if (body.startsWith("{")) {
      parse(body).path("content").forEach(block -> text.append(block.path("text").asText("")));
      return text.toString();
    }
    for (String block : body.split("\n\n")) {
      block.lines().filter(l -> l.startsWith("data: ")).map(l -> parse(l.substring(6)))
          .filter(d -> "content_block_delta".equals(d.path("type").asText()))
          .forEach(d -> text.append(d.path("delta").path("text").asText("")));
    }
    return text.toString();
  }

  /** A stream's event names, in the order they came. */
  static List<String> eventNames(String sse) {
    List<String> names = new ArrayList<>();
    for (String block : sse.split("\n\n")) {
      block.lines().filter(l -> l.startsWith("event: ")).findFirst().ifPresent(l -> names.add(l.substring(7)));
    }
    return names;
  }
}
