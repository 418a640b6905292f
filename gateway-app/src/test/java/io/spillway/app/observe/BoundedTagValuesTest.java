package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BoundedTagValuesTest {
  @Test
  void theFirstValuesUpToTheLimitAreKeptAndTheRestAreOther() {
    BoundedTagValues tags = new BoundedTagValues(2);

    assertThat(tags.tag("gpt-4o")).isEqualTo("gpt-4o");
    assertThat(tags.tag("qwen2.5-coder:7b")).isEqualTo("qwen2.5-coder:7b");
    assertThat(tags.tag("o3-mini")).isEqualTo("other");
    assertThat(tags.tag("gpt-4o")).isEqualTo("gpt-4o");
  }

  @Test
  void malformedOrMissingValuesNeverBecomeTags() {
    BoundedTagValues tags = new BoundedTagValues(10);

    assertThat(tags.tag(null)).isEqualTo("none");
    assertThat(tags.tag("")).isEqualTo("none");
    assertThat(tags.tag("a model with spaces")).isEqualTo("other");
    assertThat(tags.tag("x".repeat(65))).isEqualTo("other");
    assertThat(tags.tag("name\"}\nevil 1")).isEqualTo("other");
    assertThat(tags.tag("ok-model")).isEqualTo("ok-model");
  }

  @Test
  void aValueNotAdmittedIsOtherAndTakesNoSlotUntilItIs() {
    BoundedTagValues tags = new BoundedTagValues(1);

    assertThat(tags.tag("made-up", false)).isEqualTo("other");
    assertThat(tags.tag("gpt-4o", true)).isEqualTo("gpt-4o");
    assertThat(tags.tag("gpt-4o", false)).as("once kept, always kept").isEqualTo("gpt-4o");
    assertThat(tags.tag("o3-mini", true)).isEqualTo("other");
  }
}
