package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code store} value is parsed once, when the config is read, into one of three kinds. */
class StoreTest {
  @Test
  void eachSpellingParsesToItsKindAndIsWrittenBackAsGiven() {
    assertThat(Store.parse("memory")).isEqualTo(new Store.Memory());
    assertThat(Store.parse("embedded:/var/lib/spillway")).isEqualTo(new Store.Embedded(Path.of("/var/lib/spillway")));
    assertThat(Store.parse("redis://redis:6379/2")).isEqualTo(new Store.Redis("redis://redis:6379/2"));
    assertThat(Store.parse("rediss://cache.example:6380")).isInstanceOf(Store.Redis.class);
    for (String spelling : new String[] {"memory", "embedded:./data", "redis://redis:6379", "rediss://h:1/3"}) {
      assertThat(Store.parse(spelling).spelling()).isEqualTo(spelling);
    }
  }

  @Test
  void anythingElseIsRefusedNamingTheThreeSpellings() {
    for (String bad : new String[] {"nowhere", "embedded:", "redis://", "Memory", "file:/tmp"}) {
      assertThatThrownBy(() -> Store.parse(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not embedded:<dir>, redis://host:port or memory");
    }
  }

  @Test
  void theEmbeddedStoreNamesItsFilesInItsDirectory() {
    Store.Embedded store = (Store.Embedded) Store.parse("embedded:./data");

    assertThat(store.file("usage.mv.db")).isEqualTo(Path.of("./data/usage.mv.db"));
  }

  @Test
  void aRedisPasswordNeverShowsWhenTheStoreIsLogged() {
    Store store = Store.parse("redis://spillway:s3cret@redis:6379");

    assertThat(store.toString()).isEqualTo("redis://***@redis:6379").doesNotContain("s3cret");
  }

  @Test
  void theConfigHoldsTheParsedStoreAndDefaultsToTheEmbeddedOne() {
    ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

    assertThat(loader.parse("t", "store: memory\n").store()).isEqualTo(new Store.Memory());
    assertThat(loader.parse("t", "server: { port: 0 }\n").store()).isEqualTo(Store.DEFAULT);
    assertThat(Store.DEFAULT.spelling()).isEqualTo("embedded:./data");
  }
}
