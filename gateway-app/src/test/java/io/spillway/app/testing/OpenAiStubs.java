package io.spillway.app.testing;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;

import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;

/**
 * WireMock answers shaped exactly like OpenAI's documented wire format: chat completions,
 * completions, the Responses API, model lists, streams, and the error bodies OpenAI sends.
 */
public final class OpenAiStubs {
  private OpenAiStubs() {}

  public static ResponseDefinitionBuilder json(int status, String body) {
    return aResponse().withStatus(status).withHeader("Content-Type", "application/json").withBody(body);
  }

  public static String chatCompletionBody(String content, int promptTokens, int completionTokens) {
    return """
        {"id":"chatcmpl-abc123","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06",
         "choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null,"annotations":[]},
                     "logprobs":null,"finish_reason":"stop"}],
         "usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d},
         "service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}
        """.formatted(quote(content), promptTokens, completionTokens, promptTokens + completionTokens);
  }

  public static ResponseDefinitionBuilder chatCompletion(String content) {
    return json(200, chatCompletionBody(content, 12, 7)).withHeader("x-request-id", "req_upstream_1");
  }

  /** A chat stream: one role chunk, one chunk per piece of content, a stop chunk, optional usage, [DONE]. */
  public static ResponseDefinitionBuilder chatStream(boolean withUsage, String... pieces) {
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
        .withBody(chatStreamBody(withUsage, pieces));
  }

  public static String chatStreamBody(boolean withUsage, String... pieces) {
    StringBuilder out = new StringBuilder();
    String head = "{\"id\":\"chatcmpl-s1\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,"
        + "\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_1\",";
    String usageNull = withUsage ? ",\"usage\":null" : "";
    out.append("data: ").append(head)
        .append("\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]")
        .append(usageNull).append("}\n\n");
    for (String piece : pieces) {
      out.append("data: ").append(head)
          .append("\"choices\":[{\"index\":0,\"delta\":{\"content\":").append(quote(piece))
          .append("},\"logprobs\":null,\"finish_reason\":null}]").append(usageNull).append("}\n\n");
    }
    out.append("data: ").append(head)
        .append("\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]")
        .append(usageNull).append("}\n\n");
    if (withUsage) {
      out.append("data: ").append(head)
          .append("\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":")
          .append(pieces.length).append(",\"total_tokens\":").append(12 + pieces.length).append("}}\n\n");
    }
    out.append("data: [DONE]\n\n");
    return out.toString();
  }

  public static ResponseDefinitionBuilder completion(String text) {
    return json(200, """
        {"id":"cmpl-1","object":"text_completion","created":1741570283,"model":"gpt-3.5-turbo-instruct",
         "choices":[{"text":%s,"index":0,"logprobs":null,"finish_reason":"stop"}],
         "usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}
        """.formatted(quote(text)));
  }

  public static ResponseDefinitionBuilder completionStream(String... pieces) {
    StringBuilder out = new StringBuilder();
    for (String piece : pieces) {
      out.append("data: {\"id\":\"cmpl-s1\",\"object\":\"text_completion\",\"created\":1741570283,"
              + "\"model\":\"gpt-3.5-turbo-instruct\",\"choices\":[{\"text\":")
          .append(quote(piece)).append(",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    }
    out.append("data: [DONE]\n\n");
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(out.toString());
  }

  public static String responseBody(String text) {
    return """
        {"id":"resp_67ccd2bed1ec8190","object":"response","created_at":1741476542,"status":"completed",
         "error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-4.1-2025-04-14",
         "output":[{"type":"message","id":"msg_67ccd2bf17f0","status":"completed","role":"assistant",
                    "content":[{"type":"output_text","text":%s,"annotations":[]}]}],
         "parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},
         "store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],
         "top_p":1.0,"truncation":"disabled",
         "usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,
                  "output_tokens_details":{"reasoning_tokens":0},"total_tokens":123},
         "user":null,"metadata":{}}
        """.formatted(quote(text));
  }

  public static ResponseDefinitionBuilder response(String text) {
    return json(200, responseBody(text));
  }

  public static ResponseDefinitionBuilder responseStream(String... pieces) {
    StringBuilder out = new StringBuilder();
    String created = "{\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\","
        + "\"created_at\":1741290958,\"status\":\"in_progress\",\"model\":\"gpt-4.1-2025-04-14\",\"output\":[]}}";
    out.append("event: response.created\ndata: ").append(created).append("\n\n");
    int seq = 1;
    StringBuilder full = new StringBuilder();
    for (String piece : pieces) {
      full.append(piece);
      out.append("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":")
          .append(seq++).append(",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":")
          .append(quote(piece)).append("}\n\n");
    }
    String completed = responseBody(full.toString()).replace("\n", " ").strip();
    out.append("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":")
        .append(seq).append(",\"response\":").append(completed).append("}\n\n");
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(out.toString());
  }

  public static ResponseDefinitionBuilder models(String... ids) {
    StringBuilder data = new StringBuilder();
    for (String id : ids) {
      if (!data.isEmpty()) {
        data.append(',');
      }
      data.append("{\"id\":").append(quote(id)).append(",\"object\":\"model\",\"created\":1686935002,\"owned_by\":\"openai\"}");
    }
    return json(200, "{\"object\":\"list\",\"data\":[" + data + "]}");
  }

  /** OpenAI's "Selected model is at capacity" answer. */
  public static ResponseDefinitionBuilder atCapacity() {
    return json(503, """
        {"error":{"message":"Selected model is at capacity. Please try a different model.","type":"server_error","param":null,"code":null}}
        """);
  }

  public static ResponseDefinitionBuilder overloaded() {
    return json(503, """
        {"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}
        """);
  }

  public static ResponseDefinitionBuilder rateLimited() {
    return json(429, """
        {"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}
        """).withHeader("retry-after", "1");
  }

  public static ResponseDefinitionBuilder insufficientQuota() {
    return json(429, """
        {"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}
        """).withHeader("retry-after", "20");
  }

  public static ResponseDefinitionBuilder invalidModel() {
    return json(404, """
        {"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}
        """);
  }

  public static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
