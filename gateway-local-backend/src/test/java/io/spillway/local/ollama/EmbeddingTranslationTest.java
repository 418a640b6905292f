package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.json.Json;
import io.spillway.local.Unsupported;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class EmbeddingTranslationTest {
  private static ObjectNode json(String text) throws Exception {
    return (ObjectNode) Json.parse(text);
  }

  @Test
  void textInputsAndDimensionsGoToApiEmbedWithTheMappedModel() throws Exception {
    Unsupported unsupported = new Unsupported();

    EmbeddingTranslation translation = new EmbeddingTranslation(
        json("{\"model\":\"text-embedding-3-small\",\"input\":[\"a\",\"b\"],\"dimensions\":256,\"user\":\"u1\"}"),
        "900s");
    ObjectNode out = translation.request("nomic-embed-text", unsupported);

    assertThat(out.toString()).isEqualTo(
        "{\"model\":\"nomic-embed-text\",\"input\":[\"a\",\"b\"],\"dimensions\":256,\"keep_alive\":\"900s\"}");
    assertThat(unsupported.isEmpty()).isTrue();
    assertThat(translation.dropped()).isEmpty();
    assertThat(translation.stream()).isFalse();
  }

  @Test
  void tokenIdInputIsRefusedRatherThanEmbeddedAsSomethingElse() throws Exception {
    Unsupported unsupported = new Unsupported();
    new EmbeddingTranslation(json("{\"model\":\"m\",\"input\":[[1,2,3]]}"), "1s").request("nomic-embed-text", unsupported);

    assertThatThrownBy(() -> unsupported.throwIfAny("Embeddings API"))
        .isInstanceOfSatisfying(UnsupportedOnLocalException.class, e -> {
          assertThat(e.code()).isEqualTo("unsupported_on_local");
          assertThat(e.getMessage()).contains("token-id input");
        });
  }

  @Test
  void embeddingsAreNeverStreamed() throws Exception {
    EmbeddingTranslation translation = new EmbeddingTranslation(json("{\"input\":\"a\",\"stream\":true}"), "1s");

    assertThat(translation.stream()).isFalse();
    assertThatThrownBy(() -> translation.streamTranslator("m", 0)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void vectorsBecomeOpenAisListAsFloatsOrAsLittleEndianBase64() throws Exception {
    JsonNode answer = json("{\"model\":\"nomic-embed-text\",\"embeddings\":[[0.5,-1.0],[2.0,0.25]],\"prompt_eval_count\":6}");

    ObjectNode floats = new EmbeddingTranslation(json("{\"input\":[\"a\",\"b\"]}"), "1s")
        .answer(answer, "mapped-model", 0);
    ObjectNode base64 = new EmbeddingTranslation(json("{\"input\":[\"a\",\"b\"],\"encoding_format\":\"base64\"}"), "1s")
        .answer(answer, "mapped-model", 0);

    assertThat(floats.toString()).isEqualTo("{\"object\":\"list\",\"data\":["
        + "{\"object\":\"embedding\",\"index\":0,\"embedding\":[0.5,-1.0]},"
        + "{\"object\":\"embedding\",\"index\":1,\"embedding\":[2.0,0.25]}],"
        + "\"model\":\"nomic-embed-text\",\"usage\":{\"prompt_tokens\":6,\"total_tokens\":6}}");
    ByteBuffer decoded = ByteBuffer.wrap(Base64.getDecoder().decode(base64.at("/data/1/embedding").asText()))
        .order(ByteOrder.LITTLE_ENDIAN);
    assertThat(decoded.getFloat()).isEqualTo(2.0f);
    assertThat(decoded.getFloat()).isEqualTo(0.25f);
    assertThat(decoded.hasRemaining()).isFalse();
  }
}
