package io.spillway.core.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.spillway.core.testing.SampleSources;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TokenCounterTest {
  private static final Encoding O200K = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
  private static final TokenCounter COUNTER = TokenCounter.forModel("gpt-4o");

  private static String longText(String seed) {
    return ("def " + seed + "(a, b):\n    return a + b  # adds " + seed + "\n").repeat(40);
  }

  @Test
  void aRememberedCountIsTheSameAsCountingAgain() {
    String text = longText("remembered");
    assertThat(text.length()).isGreaterThanOrEqualTo(TokenCounter.CACHED_FROM_CHARS);

    int first = COUNTER.count(text);
    int second = COUNTER.count(new String(text.toCharArray()));

    assertThat(first).isEqualTo(O200K.countTokensOrdinary(text)).isEqualTo(second);
  }

  @Test
  void textsThatDifferInOneCharacterAreCountedApart() {
    String text = longText("apart");
    String changed = text.substring(0, text.length() - 2) + "x\n";
    COUNTER.count(text);

    assertThat(COUNTER.count(changed)).isEqualTo(O200K.countTokensOrdinary(changed));
  }

  @Test
  void limitChecksAgreeWithARememberedCount() {
    String text = longText("limits");
    int tokens = COUNTER.count(text);

    assertThat(COUNTER.exceeds(text, tokens)).isFalse();
    assertThat(COUNTER.exceeds(text, tokens - 1)).isTrue();
    assertThat(COUNTER.exceeds(List.of(text, "and more"), tokens)).isTrue();
    assertThat(COUNTER.exceeds(List.of(text), tokens)).isFalse();
  }

  @Test
  void shortAndEmptyTextsAreCountedDirectly() {
    assertThat(COUNTER.count("")).isZero();
    assertThat(COUNTER.count("tiktoken is great!")).isEqualTo(O200K.countTokensOrdinary("tiktoken is great!"));
  }

  @Test
  void modelsMapToTheirTokenizerWhateverTheirCaseOrProviderPrefix() {
    assertThat(TokenCounter.forModel("gpt-4o").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel("openai/GPT-4.1-mini").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel("gpt-4-turbo").encodingName()).isEqualTo("cl100k_base");
    assertThat(TokenCounter.forModel("azure/gpt-3.5-turbo").encodingName()).isEqualTo("cl100k_base");
    assertThat(TokenCounter.forModel("qwen2.5-coder:7b").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel(null).encodingName()).isEqualTo("o200k_base");
  }

  @Test
  void aTallyTokenizesNoMoreThanItsBudgetAndEstimatesTheRestAtTheMeasuredRate() {
    TokenTally tally = COUNTER.tally(10_000);
    String exact = longText("within");

    assertThat(tally.count(exact)).isEqualTo(O200K.countTokensOrdinary(exact));
    long oneLetter = tally.count("a".repeat(3_000_000));

    assertThat(tally.exactCharsLeft()).isZero();
    assertThat(oneLetter).as("estimated, not tokenized").isBetween(100_000L, 1_500_000L);
    assertThat(tally.exceeds(List.of("b".repeat(2_000_000)), 1_000)).isTrue();
  }

  @Test
  void longTextsAreCountedInSlicesWithTheSameResult() {
    String text = longText("sliced").repeat(20);
    assertThat(text.length()).isGreaterThan(TokenCounter.SLICE_CHARS * 3);

    assertThat(COUNTER.tally(Long.MAX_VALUE).count(text)).isEqualTo(O200K.countTokensOrdinary(text));
    String code = SampleSources.pythonModuleWithTraceback(2_000);
    assertThat(code.length()).isGreaterThan(TokenCounter.SLICE_CHARS * 3);
    assertThat(COUNTER.tally(Long.MAX_VALUE).count(code)).isEqualTo(O200K.countTokensOrdinary(code));
  }

  @Test
  void whenVocabularyLoadedStartsTheLoadIfNeededAndCompletesOnceTheVocabularyIsLoaded() throws Exception {
    TokenCounter.whenVocabularyLoaded().toCompletableFuture().get(2, TimeUnit.MINUTES);

    assertThat(TokenCounter.vocabularyLoaded()).isTrue();
    assertThat(TokenCounter.whenVocabularyLoaded().toCompletableFuture()).isCompleted();
  }
}
