package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The request bodies captured from real clients (Codex, the AI SDK, the Agents SDK, Claude Code), with their routes. */
final class CapturedBodies {
  record Captured(String name, Route route, ObjectNode body) {
    @Override
    public String toString() {
      return name;
    }
  }

  private CapturedBodies() {}

  static List<Captured> all() {
    List<Captured> out = new ArrayList<>();
    Path local = Path.of("../gateway-local-backend/src/test/resources/fixtures");
    for (String client : List.of("codex", "ai-sdk", "openai-agents")) {
      try (Stream<Path> files = Files.list(local.resolve(client))) {
        for (Path file : files.sorted().toList()) {
          String name = file.getFileName().toString();
          if (!name.endsWith(".json") || name.endsWith(".ollama.json") || name.equals("request-headers.json")) {
            continue;
          }
          out.add(new Captured(client + "/" + name, name.endsWith(".chat.json") ? Route.CHAT_COMPLETIONS : Route.RESPONSES,
              read(file)));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    out.add(new Captured("claude-code/healthy-turn.json", Route.MESSAGES,
        read(Path.of("../gateway-app/src/test/resources/fixtures/claude-code/healthy-turn.json"))));
    return out;
  }

  private static ObjectNode read(Path file) {
    try {
      return (ObjectNode) Json.parse(Files.readAllBytes(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
