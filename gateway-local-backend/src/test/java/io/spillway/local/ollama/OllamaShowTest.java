package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Reading a model's context window from Ollama's {@code /api/show} {@code model_info}. */
class OllamaShowTest {
  @Test
  void theWindowIsTheArchitecturesContextLength() throws IOException {
    JsonNode info = Json.parse("{\"general.architecture\":\"gemma3\",\"gemma3.vision.context_length\":1024,"
        + "\"gemma3.context_length\":131072}");

    assertThat(OllamaControlPlane.contextLength(info)).isEqualTo(OptionalInt.of(131072));
  }

  @Test
  void withoutAnArchitectureAnyContextLengthKeyIsRead() throws IOException {
    assertThat(OllamaControlPlane.contextLength(Json.parse("{\"llama.context_length\":8192}"))).isEqualTo(OptionalInt.of(8192));
  }

  @Test
  void modelInfoWithoutAContextLengthTellsNothing() throws IOException {
    assertThat(OllamaControlPlane.contextLength(Json.object())).isEmpty();
    assertThat(OllamaControlPlane.contextLength(Json.parse("{\"general.architecture\":\"bert\",\"bert.context_length\":0}")))
        .isEmpty();
  }
}
