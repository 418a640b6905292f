package io.spillway.quota.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.GatewayConfig;
import io.spillway.config.KeyConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The config file's keys on reload: swapped whole, and a team that lost a key is told once. */
class ConfigKeysTest {
  private static final KeyConfig RELEASE_GOLD = new KeyConfig("sk-release-1", null, "release", "gold", null);
  private static final KeyConfig RELEASE_SILVER = new KeyConfig("sk-release-2", null, "release", "silver", null);
  private static final KeyConfig SANDBOX_BRONZE = new KeyConfig("sk-sandbox", null, "sandbox", "bronze", null);

  @Test
  void aTeamThatLostAKeyOnReloadIsToldOnceAndTheOthersAreNot() {
    ConfigKeys keys = new ConfigKeys(List.of(RELEASE_GOLD, RELEASE_SILVER, SANDBOX_BRONZE));
    List<String> revoked = new ArrayList<>();
    keys.onTeamRevoked(revoked::add);

    keys.reload(GatewayConfig.defaults().withKeys(List.of(SANDBOX_BRONZE)));

    assertThat(revoked).containsExactly("release");
    assertThat(keys.get().authenticate("sk-release-1")).isNull();
    assertThat(keys.get().authenticate("sk-sandbox").team()).isEqualTo("sandbox");
  }

  @Test
  void aReloadThatKeepsEveryKeyRevokesNothingEvenWhenItAddsOne() {
    ConfigKeys keys = new ConfigKeys(List.of(RELEASE_GOLD));
    List<String> revoked = new ArrayList<>();
    keys.onTeamRevoked(revoked::add);

    keys.reload(GatewayConfig.defaults().withKeys(List.of(RELEASE_GOLD, SANDBOX_BRONZE)));

    assertThat(revoked).isEmpty();
    assertThat(keys.get().authenticate("sk-sandbox")).isNotNull();
  }

  @Test
  void aTeamWhoseKeyIsReplacedByANewOneStillLosesWhatTheOldKeyCached() {
    ConfigKeys keys = new ConfigKeys(List.of(RELEASE_GOLD));
    List<String> revoked = new ArrayList<>();
    keys.onTeamRevoked(revoked::add);

    keys.reload(GatewayConfig.defaults().withKeys(List.of(new KeyConfig("sk-release-new", null, "release", "gold", null))));

    assertThat(revoked).containsExactly("release");
  }
}
