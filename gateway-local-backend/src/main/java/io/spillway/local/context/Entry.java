package io.spillway.local.context;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One message or input item of a conversation, as the fitter sees it: what it is, which tool calls
 * it makes or answers, the field its text lives in, and its estimated size. Not thread-safe; one
 * fitting owns it.
 */
final class Entry {
  /** What an entry is to an agent, which decides what the fitter may do to it. */
  enum Kind {
    /** system/developer messages: always kept. */
    INSTRUCTION,
    USER,
    ASSISTANT,
    /** An assistant turn that calls tools (chat {@code tool_calls}, Responses {@code *_call} items). */
    CALL,
    /** A tool's answer (chat {@code tool} messages, Responses {@code *_call_output} items). */
    OUTPUT,
    /** Anything else (Responses {@code reasoning}, item references, ...). */
    OTHER
  }

  final ObjectNode node;
  final Kind kind;
  /** The call ids this entry makes ({@link Kind#CALL}) or answers ({@link Kind#OUTPUT}). */
  final List<String> callIds;
  /** The field holding the text the fitter may shorten ({@code content} or {@code output}), or null. */
  final String textField;
  int tokens;
  int unit = -1;
  boolean dropped;

  Entry(ObjectNode node, Kind kind, List<String> callIds, String textField) {
    this.node = node;
    this.kind = kind;
    this.callIds = List.copyOf(callIds);
    this.textField = textField;
  }

  /** The shortenable text: a string field, or the text parts of a content array joined; null if none. */
  String text() {
    if (textField == null) {
      return null;
    }
    JsonNode value = node.get(textField);
    if (value == null || value.isNull()) {
      return null;
    }
    if (value.isTextual()) {
      return value.textValue();
    }
    if (!value.isArray()) {
      return null;
    }
    StringBuilder text = new StringBuilder();
    for (JsonNode part : value) {
      String type = part.path("type").asText("");
      if (!(type.equals("text") || type.equals("input_text") || type.equals("output_text"))) {
        return null; // images and files are not text the fitter can cut without losing them
      }
      if (!text.isEmpty()) {
        text.append('\n');
      }
      text.append(part.path("text").asText(""));
    }
    return text.toString();
  }

  void replaceText(String text) {
    node.put(textField, text);
  }
}
