package io.spillway.quota.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import java.io.IOException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TokenEstimatorTest {
  private static final Encoding O200K = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
  private static final Encoding CL100K = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

  private final TokenEstimator estimator = new TokenEstimator(1024);

  static GatewayRequest request(Route route, String json) {
    try {
      return GatewayRequest.create("req-1", route, Headers.EMPTY, (ObjectNode) Json.parse(json), null, Instant.EPOCH);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  @Test
  void usesTheRealTokenizerOfTheModelFamily() {
    assertThat(CL100K.countTokens("tiktoken is great!")).isEqualTo(6);
    assertThat(estimator.count("gpt-4o-mini", "tiktoken is great!")).isEqualTo(O200K.countTokens("tiktoken is great!"));
    assertThat(estimator.count("gpt-4-turbo", "tiktoken is great!")).isEqualTo(6);
    assertThat(estimator.count("qwen2.5-coder:7b", "tiktoken is great!")).isEqualTo(6);
  }

  @Test
  void chatPromptCountsEveryMessageWithOpenAisFramingPlusMaxCompletionTokens() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o","max_tokens":50,"max_completion_tokens":200,
         "messages":[{"role":"system","content":"You are terse."},
                     {"role":"user","content":[{"type":"text","text":"Fix this bug please"},
                                               {"type":"image_url","image_url":{"url":"data:image/png;base64,%s"}}]}]}
        """.formatted("A".repeat(100_000)));

    TokenEstimator.Estimate estimate = estimator.estimate(chat);

    long expectedPrompt = 3 + (3 + O200K.countTokens("You are terse.")) + (3 + O200K.countTokens("Fix this bug please"));
    assertThat(estimate.promptTokens()).isEqualTo(expectedPrompt);
    assertThat(estimate.maxOutputTokens()).isEqualTo(200);
    assertThat(estimate.total()).isEqualTo(expectedPrompt + 200);
  }

  @Test
  void withoutALimitTheConfiguredDefaultIsAssumedForEachChoice() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"n\":3,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    assertThat(estimator.estimate(chat).maxOutputTokens()).isEqualTo(3 * 1024);
  }

  @Test
  void responsesCountInstructionsInputAndMaxOutputTokens() {
    GatewayRequest responses = request(Route.RESPONSES, """
        {"model":"gpt-4.1","instructions":"Answer in French.","max_output_tokens":64,
         "input":[{"role":"user","content":[{"type":"input_text","text":"What is a spillway?"}]}]}
        """);

    TokenEstimator.Estimate estimate = estimator.estimate(responses);

    assertThat(estimate.promptTokens())
        .isEqualTo(O200K.countTokens("Answer in French.") + O200K.countTokens("What is a spillway?"));
    assertThat(estimate.maxOutputTokens()).isEqualTo(64);
  }

  @Test
  void completionsCountThePromptAndItsMaxTokens() {
    GatewayRequest completion = request(Route.COMPLETIONS,
        "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":[\"def add(a, b):\",\"    return\"],\"max_tokens\":16}");

    TokenEstimator.Estimate estimate = estimator.estimate(completion);

    assertThat(estimate.promptTokens()).isEqualTo(CL100K.countTokens("def add(a, b):") + CL100K.countTokens("    return"));
    assertThat(estimate.maxOutputTokens()).isEqualTo(16);
  }

  @Test
  void specialTokenTextInAPromptIsCountedAsOrdinaryText() {
    GatewayRequest chat = request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"<|endoftext|>\"}]}");

    assertThat(estimator.estimate(chat).promptTokens()).isEqualTo(3 + 3 + O200K.countTokensOrdinary("<|endoftext|>"));
  }
}
