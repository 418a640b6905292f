package io.spillway.core.redact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class RedactorTest {
  private static final String KEY = "sk-proj/Abc_123-xyz";
  private static final Redactor REDACTOR = Redactor.of(List.of(KEY));

  @ParameterizedTest
  @ValueSource(strings = {
      "sk-proj/Abc_123-xyz",
      "sk-proj\\/Abc_123-xyz",
      "\\u0073k-proj/Abc_123-xyz",
      "\\u0073\\u006B\\u002d\\u0070\\u0072\\u006f\\u006a\\u002f\\u0041\\u0062\\u0063\\u005f\\u0031\\u0032\\u0033\\u002d\\u0078\\u0079\\u007a",
      "sk-proj\\u002FAbc\\u005f123-xy\\u007A"})
  void everyJsonSpellingOfASecretIsReplaced(String spelled) {
    String body = "{\"error\":{\"message\":\"bad key " + spelled + " (twice: " + spelled + ")\"}}";

    String redacted = REDACTOR.redact(body);

    assertThat(redacted).isEqualTo("{\"error\":{\"message\":\"bad key [redacted] (twice: [redacted])\"}}");
    assertThat(new String(REDACTOR.redact(body.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8))
        .isEqualTo(redacted);
  }

  @ParameterizedTest
  @ValueSource(strings = {"sk-proj/Abc_123-xyz", "sk-proj\\/Abc_123-xyz", "\\u0073k-proj/Abc_123-xyz"})
  void aSecretIsFoundInAnyPartOfAnArrayInEverySpellingAndNeverOutsideThePart(String spelled) {
    byte[] bytes = ("data: {\"t\":\"\u00fcber " + spelled + "\"}\r\n\r\n").getBytes(StandardCharsets.UTF_8);
    Redactor unicode = Redactor.of(List.of("cl\u00e9-secr\u00e8te-42"));
    byte[] withUnicode = "data: {\"t\":\"cl\u00e9-secr\u00e8te-42\"}\n\n".getBytes(StandardCharsets.UTF_8);

    assertThat(REDACTOR.contains(bytes, 0, bytes.length)).isTrue();
    assertThat(REDACTOR.contains(bytes, 12, bytes.length - 12)).as("from the secret's own start").isTrue();
    assertThat(REDACTOR.contains(bytes, 0, bytes.length - 7)).as("its last byte left out").isFalse();
    assertThat(unicode.contains(withUnicode, 0, withUnicode.length)).isTrue();
    assertThat(unicode.contains(withUnicode, 1, withUnicode.length - 8)).isFalse();
    assertThat(Redactor.NONE.contains(bytes, 0, bytes.length)).isFalse();
  }

  @Test
  void bytesAroundASecretAreKeptExactlyIncludingMultiByteCharacters() {
    String body = "{\"text\":\"über " + KEY + " — ok ✓ \uD83D\uDE00\"}";

    byte[] redacted = REDACTOR.redact(body.getBytes(StandardCharsets.UTF_8));

    assertThat(new String(redacted, StandardCharsets.UTF_8)).isEqualTo("{\"text\":\"über [redacted] — ok ✓ \uD83D\uDE00\"}");
  }

  @Test
  void textWithoutASecretIsReturnedAsItIs() {
    String text = "{\"content\":\"sk-proj/Abc_123-xy and \\\\u0073 and \\\\\"}";
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);

    assertThat(REDACTOR.redact(text)).isSameAs(text);
    assertThat(REDACTOR.redact(bytes)).isSameAs(bytes);
    assertThat(Arrays.equals(REDACTOR.redact(bytes), text.getBytes(StandardCharsets.UTF_8))).isTrue();
  }

  @Test
  void secretsTooShortToBeTellingAndMissingOnesAreNotRedacted() {
    Redactor redactor = Redactor.of(Arrays.asList(null, "", "short", "   "));

    assertThat(redactor.isEmpty()).isTrue();
    assertThat(redactor.redact("a short text")).isEqualTo("a short text");
  }

  @Test
  void replacedSecretsAreRedactedFromThenOnAndNoneStaysEmpty() {
    Redactor redactor = Redactor.of(java.util.List.of());
    String token = "admin-token-rotated-42";

    redactor.secrets(java.util.List.of(token));

    assertThat(redactor.redact("{\"t\":\"" + token + "\"}")).isEqualTo("{\"t\":\"" + Redactor.MARK + "\"}");
    assertThat(redactor.redact(("x " + token).getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(("x " + Redactor.MARK).getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> Redactor.NONE.secrets(java.util.List.of(token)))
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
