package io.spillway.core.responses;

import java.util.concurrent.ThreadLocalRandom;

/** Ids for the input items a client sent without one, in OpenAI's shapes ({@code msg_…}, {@code fc_…}). */
final class StoredIds {
  private static final char[] ALPHABET = "abcdef0123456789".toCharArray();

  private StoredIds() {}

  /** A fresh id for an item of {@code type}. */
  static String forItem(String type) {
    String prefix = switch (type == null ? "message" : type) {
      case "message" -> "msg_";
      case "function_call" -> "fc_";
      case "function_call_output" -> "fco_";
      case "custom_tool_call" -> "ctc_";
      case "custom_tool_call_output" -> "ctco_";
      default -> "item_";
    };
    ThreadLocalRandom random = ThreadLocalRandom.current();
    StringBuilder out = new StringBuilder(prefix.length() + 48).append(prefix);
    for (int i = 0; i < 48; i++) {
      out.append(ALPHABET[random.nextInt(ALPHABET.length)]);
    }
    return out.toString();
  }
}
