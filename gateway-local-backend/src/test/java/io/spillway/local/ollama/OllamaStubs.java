package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;

import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;

/**
 * WireMock answers shaped like Ollama's documented API (docs/api.md, docs.ollama.com/api): whole
 * JSON answers for {@code "stream": false}, {@code application/x-ndjson} streams of one JSON object
 * per line ending in a {@code "done": true} line with the counts, {@code {"error": "…"}} errors, and
 * {@code /api/tags}, {@code /api/version}.
 */
public final class OllamaStubs {
  public static final String CREATED_AT = "2026-11-10T10:00:00.123456Z";

  private OllamaStubs() {}

  public static ResponseDefinitionBuilder json(int status, String body) {
    return aResponse().withStatus(status).withHeader("Content-Type", "application/json; charset=utf-8").withBody(body);
  }

  public static ResponseDefinitionBuilder ndjson(String body) {
    return aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson").withBody(body);
  }

  private static String counts(int promptEvalCount, int evalCount) {
    return "\"total_duration\":4883583458,\"load_duration\":1334875,\"prompt_eval_count\":" + promptEvalCount
        + ",\"prompt_eval_duration\":342546000,\"eval_count\":" + evalCount + ",\"eval_duration\":4535599000";
  }

  /** {@code /api/chat} with {@code "stream": false}. */
  public static ResponseDefinitionBuilder chat(String model, String content, String doneReason, int prompt, int eval) {
    return json(200, """
        {"model":"%s","created_at":"%s","message":{"role":"assistant","content":%s},
         "done_reason":"%s","done":true,%s}
        """.formatted(model, CREATED_AT, quote(content), doneReason, counts(prompt, eval)));
  }

  /** {@code /api/chat} answering with tool calls (arguments as an object, as Ollama sends them). */
  public static ResponseDefinitionBuilder chatToolCall(String model, String name, String argumentsJson) {
    return json(200, """
        {"model":"%s","created_at":"%s","message":{"role":"assistant","content":"",
          "tool_calls":[{"function":{"name":"%s","arguments":%s}}]},
         "done_reason":"stop","done":true,%s}
        """.formatted(model, CREATED_AT, name, argumentsJson, counts(122, 33)));
  }

  /** A streamed {@code /api/chat}: one line per piece, then the final line with the counts. */
  public static String chatStreamBody(String model, String doneReason, int prompt, int eval, String... pieces) {
    StringBuilder out = new StringBuilder();
    for (String piece : pieces) {
      out.append(chatLine(model, piece)).append('\n');
    }
    out.append(chatFinalLine(model, doneReason, prompt, eval)).append('\n');
    return out.toString();
  }

  public static String chatLine(String model, String content) {
    return "{\"model\":\"" + model + "\",\"created_at\":\"" + CREATED_AT + "\",\"message\":{\"role\":\"assistant\","
        + "\"content\":" + quote(content) + "},\"done\":false}";
  }

  public static String chatFinalLine(String model, String doneReason, int prompt, int eval) {
    return "{\"model\":\"" + model + "\",\"created_at\":\"" + CREATED_AT + "\",\"message\":{\"role\":\"assistant\","
        + "\"content\":\"\"},\"done_reason\":\"" + doneReason + "\",\"done\":true," + counts(prompt, eval) + "}";
  }

  /** A streamed tool call, as Ollama sends it since streaming tool support (one line with tool_calls). */
  public static String chatStreamToolCallBody(String model, String name, String argumentsJson) {
    return "{\"model\":\"" + model + "\",\"created_at\":\"" + CREATED_AT + "\",\"message\":{\"role\":\"assistant\","
        + "\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"" + name + "\",\"arguments\":" + argumentsJson
        + "}}]},\"done\":false}\n"
        + chatFinalLine(model, "stop", 122, 33) + "\n";
  }

  /**
   * {@code /api/chat} answering with {@code content} and the tool calls {@code callsJson} (a JSON
   * array of {@code {"function":{"name":…,"arguments":{…}}}}, as Ollama sends them).
   */
  public static ResponseDefinitionBuilder chatWithCalls(String model, String content, String callsJson) {
    return json(200, """
        {"model":"%s","created_at":"%s","message":{"role":"assistant","content":%s,"tool_calls":%s},
         "done_reason":"stop","done":true,%s}
        """.formatted(model, CREATED_AT, quote(content), callsJson, counts(122, 33)));
  }

  /** A streamed answer: the text {@code pieces}, then one line with the tool calls {@code callsJson}. */
  public static String chatStreamWithCalls(String model, String callsJson, String... pieces) {
    StringBuilder out = new StringBuilder();
    for (String piece : pieces) {
      out.append(chatLine(model, piece)).append('\n');
    }
    out.append("{\"model\":\"").append(model).append("\",\"created_at\":\"").append(CREATED_AT)
        .append("\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":").append(callsJson)
        .append("},\"done\":false}\n");
    out.append(chatFinalLine(model, "stop", 122, 33)).append('\n');
    return out.toString();
  }

  /** {@code /api/generate} with {@code "stream": false}. */
  public static ResponseDefinitionBuilder generate(String model, String response, String doneReason, int prompt, int eval) {
    return json(200, """
        {"model":"%s","created_at":"%s","response":%s,"done":true,"done_reason":"%s",
         "context":[1,2,3],%s}
        """.formatted(model, CREATED_AT, quote(response), doneReason, counts(prompt, eval)));
  }

  public static String generateStreamBody(String model, String doneReason, int prompt, int eval, String... pieces) {
    StringBuilder out = new StringBuilder();
    for (String piece : pieces) {
      out.append("{\"model\":\"").append(model).append("\",\"created_at\":\"").append(CREATED_AT)
          .append("\",\"response\":").append(quote(piece)).append(",\"done\":false}\n");
    }
    out.append("{\"model\":\"").append(model).append("\",\"created_at\":\"").append(CREATED_AT)
        .append("\",\"response\":\"\",\"done\":true,\"done_reason\":\"").append(doneReason)
        .append("\",\"context\":[1,2,3],").append(counts(prompt, eval)).append("}\n");
    return out.toString();
  }

  /** The answer to loading a model (empty prompt). */
  public static ResponseDefinitionBuilder loaded(String model) {
    return json(200, "{\"model\":\"" + model + "\",\"created_at\":\"" + CREATED_AT
        + "\",\"response\":\"\",\"done\":true,\"done_reason\":\"load\"}");
  }

  /** Ollama's error body: only an {@code error} string. */
  public static ResponseDefinitionBuilder error(int status, String message) {
    return json(status, "{\"error\":" + quote(message) + "}");
  }

  public static ResponseDefinitionBuilder version(String version) {
    return json(200, "{\"version\":\"" + version + "\"}");
  }

  public static ResponseDefinitionBuilder tags(String... names) {
    StringBuilder models = new StringBuilder();
    for (String name : names) {
      if (!models.isEmpty()) {
        models.append(',');
      }
      models.append("""
          {"name":"%s","model":"%s","modified_at":"2026-10-04T14:56:49.277302595-07:00","size":7365960935,
           "digest":"9f438cb9cd581fc025612d27f7c1a6669ff83a8bb0ed86c94fcf4c5440555697",
           "details":{"format":"gguf","family":"llama","families":null,"parameter_size":"13B","quantization_level":"Q4_0"}}
          """.formatted(name, name));
    }
    return json(200, "{\"models\":[" + models + "]}");
  }

  public static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        default -> out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
