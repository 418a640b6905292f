package io.spillway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;

/**
 * Turns valid OpenAI request bodies into plausible bad ones, reproducibly from a seed: byte-level
 * damage (flips, cuts, splices, stray quotes and invalid UTF-8) and structural damage (a field
 * replaced by a value of another type, absurd numbers, deep nesting, control characters).
 */
public final class JsonMutator {
  private static final ObjectMapper PLAIN = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final byte[] SPECIAL = {'"', '\\', '{', '}', '[', ']', ',', ':', 0, (byte) 0xFF, (byte) 0xC3,
      (byte) 0xED, '\n', '\r', 'e', '-', '.', '0'};
  private static final String[] FIELDS = {"model", "messages", "stream", "max_tokens", "max_completion_tokens",
      "max_output_tokens", "temperature", "top_p", "n", "prompt", "input", "stop", "tools", "stream_options",
      "role", "content", "seed", "user"};

  public static final List<String> CORPUS = List.of(
      """
      {"model":"gpt-4o","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hi"}],\
      "temperature":0.7,"top_p":0.9,"max_tokens":64,"stream":false,"n":1,"stop":["\\n\\n"],"user":"u-1"}""",
      """
      {"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},\
      "messages":[{"role":"user","content":[{"type":"text","text":"what is in this image?"},\
      {"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}],\
      "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]}""",
      """
      {"model":"gpt-3.5-turbo-instruct","prompt":"def add(a, b):","max_tokens":16,"temperature":0}""",
      """
      {"model":"gpt-4.1","input":[{"role":"user","content":"2+2?"}],"max_output_tokens":100,"stream":false}""",
      """
      {"model":"o3","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",\
      "function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"42"}],\
      "max_completion_tokens":2048}""");

  private final Random random;

  public JsonMutator(long seed) {
    this.random = new Random(seed);
  }

  public Random random() {
    return random;
  }

  /** One mutated body: a corpus entry damaged once or a few times. */
  public byte[] next() {
    String base = CORPUS.get(random.nextInt(CORPUS.size()));
    int kind = random.nextInt(10);
    byte[] body;
    if (kind < 4) {
      body = structural(base);
    } else if (kind < 9) {
      body = bytewise(base.getBytes(StandardCharsets.UTF_8));
    } else {
      body = new byte[random.nextInt(200)];
      random.nextBytes(body);
    }
    if (random.nextInt(4) == 0) {
      body = bytewise(body);
    }
    return body;
  }

  private byte[] bytewise(byte[] in) {
    List<Byte> out = new ArrayList<>(in.length + 16);
    for (byte b : in) {
      out.add(b);
    }
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits && !out.isEmpty(); e++) {
      int at = random.nextInt(out.size());
      switch (random.nextInt(6)) {
        case 0 -> out.set(at, (byte) (out.get(at) ^ (1 << random.nextInt(8))));
        case 1 -> out.subList(at, Math.min(out.size(), at + 1 + random.nextInt(8))).clear();
        case 2 -> out.add(at, SPECIAL[random.nextInt(SPECIAL.length)]);
        case 3 -> out.subList(at, out.size()).clear();
        case 4 -> {
          int len = Math.min(out.size() - at, 1 + random.nextInt(16));
          out.addAll(random.nextInt(out.size()), new ArrayList<>(out.subList(at, at + len)));
        }
        default -> out.set(at, SPECIAL[random.nextInt(SPECIAL.length)]);
      }
    }
    byte[] result = new byte[out.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = out.get(i);
    }
    return result;
  }

  private byte[] structural(String base) {
    try {
      JsonNode root = PLAIN.readTree(base);
      int edits = 1 + random.nextInt(2);
      for (int e = 0; e < edits; e++) {
        List<JsonNode> containers = new ArrayList<>();
        collect(root, containers);
        JsonNode target = containers.get(random.nextInt(containers.size()));
        if (target instanceof ObjectNode object) {
          String field = random.nextBoolean() || object.isEmpty()
              ? FIELDS[random.nextInt(FIELDS.length)]
              : nth(object.fieldNames(), random.nextInt(object.size()));
          if (random.nextInt(8) == 0) {
            object.remove(field);
          } else {
            object.set(field, value(0));
          }
        } else if (target instanceof ArrayNode array) {
          if (array.isEmpty() || random.nextBoolean()) {
            array.add(value(0));
          } else {
            array.set(random.nextInt(array.size()), value(0));
          }
        }
      }
      return PLAIN.writeValueAsBytes(root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void collect(JsonNode node, List<JsonNode> out) {
    if (node.isContainerNode()) {
      out.add(node);
      node.forEach(child -> collect(child, out));
    }
  }

  private static String nth(Iterator<String> names, int n) {
    String name = names.next();
    for (int i = 0; i < n; i++) {
      name = names.next();
    }
    return name;
  }

  private JsonNode value(int depth) {
    return switch (random.nextInt(depth > 3 ? 9 : 12)) {
      case 0 -> NODES.nullNode();
      case 1 -> NODES.booleanNode(random.nextBoolean());
      case 2 -> NODES.numberNode(random.nextInt(7) - 3);
      case 3 -> NODES.numberNode(random.nextLong());
      case 4 -> NODES.numberNode(new BigInteger(200, random).negate());
      case 5 -> NODES.numberNode(random.nextDouble() * Math.pow(10, random.nextInt(40) - 20));
      case 6 -> NODES.textNode(weirdText());
      case 7 -> NODES.textNode("gpt-4o");
      case 8 -> NODES.numberNode(Double.MAX_VALUE);
      case 9 -> {
        ArrayNode array = NODES.arrayNode();
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
          array.add(value(depth + 1));
        }
        yield array;
      }
      case 10 -> {
        ObjectNode object = NODES.objectNode();
        int n = random.nextInt(4);
        for (int i = 0; i < n; i++) {
          object.set(FIELDS[random.nextInt(FIELDS.length)], value(depth + 1));
        }
        yield object;
      }
      default -> {
        JsonNode deep = NODES.textNode("deep");
        int levels = 1 + random.nextInt(120);
        for (int i = 0; i < levels; i++) {
          deep = random.nextBoolean() ? NODES.arrayNode().add(deep) : NODES.objectNode().set("a", deep);
        }
        yield deep;
      }
    };
  }

  private String weirdText() {
    String[] pieces = {"", " ", "gpt-4o", "\n", "\r\n", "\u0000", "\u0007", "\u007f", "é", "\uD83D\uDE00",
        "http://127.0.0.1:1/x", "../../admin", "a@b", "#frag", "%2e%2e", "${jndi:ldap://x}", "x".repeat(300),
        "\\", "\"", "user"};
    StringBuilder text = new StringBuilder();
    int n = random.nextInt(3);
    for (int i = 0; i <= n; i++) {
      text.append(pieces[random.nextInt(pieces.length)]);
    }
    return text.toString();
  }
}
