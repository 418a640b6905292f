package io.spillway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Request bodies to test what reads a prompt with: the ones captured from real clients (Codex, the AI
 * SDK, the Agents SDK, Claude Code) and the benchmark's, and generated ones, reproducible from a seed,
 * that reach every rule of every route: each field where the model reads text, binary and structural
 * fields, token ids, tool definitions, {@code tool_use} and {@code tool_result} blocks, and values of
 * the wrong kind in each of those places. Paths are relative to a module's directory.
 */
public final class PromptBodies {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String[] TYPES = {"text", "input_text", "output_text", "tool_use", "tool_result", "message",
      "function_call_output", "custom_tool_call_output", "function_call", "image_url", "image", "document", "thinking"};
  /** The part types the rules single out, more often than the rest. */
  private static final String[] COMMON_PART_TYPES = {"text", "text", "input_text", "tool_result", "tool_result",
      "tool_use"};
  private static final String[] ROLES = {"system", "developer", "user", "assistant", "tool"};
  private static final String[] KEYS = {"role", "content", "text", "type", "name", "input", "output", "id", "call_id",
      "tool_use_id", "source", "signature", "cache_control", "citations", "data", "image_url", "url", "arguments",
      "function", "tool_calls", "status", "detail", "file", "file_id", "audio", "input_audio", "description"};
  private static final String[] TOP_KEYS = {"messages", "prompt", "suffix", "instructions", "input", "system", "tools",
      "functions", "response_format"};
  private static final String[] TEXTS = {"", "hi", "Fix the failing test.", "ok",
      "def run():\n    for a in xs:\n        for b in ys:\n            for c in zs:\n                pass  # TODO\n",
      "The build fails on line 12 with a NullPointerException; here is the stack trace and the file around it.",
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=QUJDREVGR0hJSktMTU5PUFFS",
      "// TODO: implement\n// TODO: implement\n// TODO: implement\n// TODO: implement\n",
      "{\"cmd\":[\"bash\",\"-lc\",\"ls -la\"],\"workdir\":\"/repo\"}", "çà et là — 日本語のテキスト 🙂 and an emoji"};

  /** A body with its route and a name to show. */
  public record Body(String name, Route route, ObjectNode body) {
    @Override
    public String toString() {
      return name;
    }
  }

  private PromptBodies() {}

  /** Every body captured from a real client, and the benchmark's bodies. */
  public static List<Body> captured() {
    List<Body> out = new ArrayList<>();
    Path local = Path.of("../gateway-local-backend/src/test/resources/fixtures");
    for (String client : List.of("codex", "ai-sdk", "openai-agents")) {
      try (Stream<Path> files = Files.list(local.resolve(client))) {
        for (Path file : files.sorted().toList()) {
          String name = file.getFileName().toString();
          if (name.endsWith(".json") && !name.endsWith(".ollama.json") && !name.equals("request-headers.json")) {
            out.add(new Body(client + "/" + name,
                name.endsWith(".chat.json") ? Route.CHAT_COMPLETIONS : Route.RESPONSES, read(file)));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    Path claude = Path.of("../gateway-app/src/test/resources/fixtures/claude-code/healthy-turn.json");
    out.add(new Body("claude-code/healthy-turn.json", Route.MESSAGES, read(claude)));
    out.add(new Body("claude-code/healthy-turn.json (count_tokens)", Route.MESSAGES_COUNT_TOKENS, read(claude)));
    out.add(new Body("bench/chat-request.json", Route.CHAT_COMPLETIONS, read(Path.of("../bench/chat-request.json"))));
    out.add(new Body("bench/codex-chat-request.json", Route.CHAT_COMPLETIONS,
        read(Path.of("../bench/codex-chat-request.json"))));
    return out;
  }

  /** A generated body for {@code route}; its fields are those any route reads, each present or not. */
  public static ObjectNode generated(Random random, Route route) {
    ObjectNode body = Json.object().put("model", random.nextBoolean() ? "gpt-4o" : "gpt-4-turbo");
    for (String key : TOP_KEYS) {
      if (random.nextInt(3) > 0) {
        body.set(key, top(random, key));
      }
    }
    if (random.nextBoolean()) {
      body.put(route == Route.RESPONSES ? "max_output_tokens" : "max_tokens", random.nextInt(2000) - 10);
    }
    if (random.nextInt(4) == 0) {
      body.put("n", random.nextInt(4));
    }
    return body;
  }

  private static JsonNode top(Random random, String key) {
    return switch (key) {
      case "messages", "input" -> random.nextInt(10) < 7 ? items(random) : random.nextBoolean() ? text(random) : value(random, 2);
      case "prompt" -> switch (random.nextInt(4)) {
        case 0 -> text(random);
        case 1 -> {
          ArrayNode prompt = NODES.arrayNode();
          for (int i = random.nextInt(5); i > 0; i--) {
            prompt.add(random.nextBoolean() ? text(random) : value(random, 1));
          }
          yield prompt;
        }
        default -> value(random, 2);
      };
      case "system" -> random.nextBoolean() ? text(random) : random.nextBoolean() ? parts(random, 2) : value(random, 2);
      default -> random.nextInt(3) == 0 ? text(random) : value(random, 3);
    };
  }

  private static ArrayNode items(Random random) {
    ArrayNode items = NODES.arrayNode();
    for (int i = random.nextInt(7); i > 0; i--) {
      items.add(random.nextInt(8) > 0 ? item(random, 3) : value(random, 1));
    }
    return items;
  }

  /** A message or an input item: the fields the rules look at, and some others, nested at most {@code depth} deep. */
  private static ObjectNode item(Random random, int depth) {
    ObjectNode item = NODES.objectNode();
    if (random.nextInt(4) > 0) {
      item.set("type", random.nextInt(8) > 0 ? NODES.textNode(pick(random, TYPES)) : value(random, 0));
    }
    if (random.nextInt(3) > 0) {
      item.put("role", pick(random, ROLES));
    }
    if (random.nextInt(5) > 0) {
      item.set("content", random.nextBoolean() ? text(random)
          : random.nextInt(3) > 0 ? parts(random, depth - 1) : value(random, depth - 1));
    }
    for (int i = random.nextInt(4); i > 0; i--) {
      String key = pick(random, KEYS);
      if (!item.has(key)) {
        item.set(key, random.nextBoolean() ? text(random) : value(random, depth - 1));
      }
    }
    return item;
  }

  /** Content blocks or parts: text ones, tool uses and results (with content of their own), and others. */
  private static ArrayNode parts(Random random, int depth) {
    ArrayNode parts = NODES.arrayNode();
    for (int i = random.nextInt(5); i > 0; i--) {
      ObjectNode part = NODES.objectNode();
      String type = random.nextInt(5) == 0 ? null : pick(random, random.nextBoolean() ? COMMON_PART_TYPES : TYPES);
      if (type != null) {
        part.put("type", type);
      }
      if (random.nextInt(4) > 0) {
        part.set("text", random.nextInt(6) > 0 ? text(random) : value(random, 0));
      }
      if (random.nextInt(4) == 0) {
        part.set("input", value(random, depth - 1));
      }
      if ("tool_result".equals(type) ? random.nextInt(4) > 0 : depth > 0 && random.nextInt(3) == 0) {
        part.set("content", random.nextBoolean() || depth <= 0 ? text(random) : parts(random, depth - 1));
      }
      if (random.nextInt(3) == 0) {
        String key = pick(random, KEYS);
        if (!part.has(key)) {
          part.set(key, random.nextBoolean() ? text(random) : value(random, depth - 1));
        }
      }
      parts.add(random.nextInt(10) > 0 ? part : value(random, depth - 1));
    }
    return parts;
  }

  /** Any JSON value, containers nested at most {@code depth} deep. */
  private static JsonNode value(Random random, int depth) {
    switch (random.nextInt(depth > 0 ? 8 : 5)) {
      case 0:
      case 4:
        return text(random);
      case 1:
        return random.nextBoolean() ? NODES.numberNode(random.nextInt(100_000)) : NODES.numberNode(random.nextDouble());
      case 2:
        return NODES.booleanNode(random.nextBoolean());
      case 3:
        return NODES.nullNode();
      case 5:
        ArrayNode array = NODES.arrayNode();
        for (int i = random.nextInt(4); i > 0; i--) {
          array.add(value(random, depth - 1));
        }
        return array;
      default:
        if (random.nextBoolean()) {
          return item(random, depth - 1);
        }
        ObjectNode object = NODES.objectNode();
        for (int i = random.nextInt(4); i > 0; i--) {
          object.set(pick(random, KEYS), value(random, depth - 1));
        }
        return object;
    }
  }

  /** A text: one of a few (so that bodies repeat texts, as agents' turns do), or a new one. */
  private static JsonNode text(Random random) {
    String text = pick(random, TEXTS);
    return NODES.textNode(random.nextInt(4) == 0 ? text + " #" + random.nextInt(1_000_000) : text);
  }

  private static String pick(Random random, String[] values) {
    return values[random.nextInt(values.length)];
  }

  private static ObjectNode read(Path file) {
    try {
      return (ObjectNode) Json.parse(Files.readAllBytes(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
