package io.spillway.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloserTest {
  private final List<String> closed = new ArrayList<>();

  private AutoCloseable part(String name) {
    return () -> closed.add(name);
  }

  private AutoCloseable failing(String name) {
    return () -> {
      closed.add(name);
      throw new IllegalStateException(name + " would not close");
    };
  }

  @Test
  void everyPartIsClosedInOrder() {
    new Closer().then("server", part("server")).then("pools", part("pools")).closeAll();

    assertThat(closed).containsExactly("server", "pools");
  }

  @Test
  void everyPartIsClosedEvenWhenOneFailsAndTheFailureNamesIt() {
    Closer closer = new Closer().then("server", part("server")).then("store", failing("store"))
        .then("keys", part("keys")).then("tracing", failing("tracing")).then("clients", part("clients"));

    assertThatThrownBy(closer::closeAll)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("closing store failed")
        .satisfies(e -> assertThat(e.getSuppressed()).singleElement()
            .satisfies(s -> assertThat(s).hasMessage("closing tracing failed")));
    assertThat(closed).containsExactly("server", "store", "keys", "tracing", "clients");
  }

  @Test
  void aPartThatWasNeverBuiltIsSkipped() {
    new Closer().then("local", null).then("clients", part("clients")).closeAll();

    assertThat(closed).containsExactly("clients");
  }
}
