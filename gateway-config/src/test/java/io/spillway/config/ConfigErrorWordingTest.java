package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Config errors point at the key as written, name the expected type in plain words, list the known
 * keys sorted with the nearest offered, and treat choices one way everywhere: case-sensitive.
 */
class ConfigErrorWordingTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  private void refused(String yaml, String message) {
    assertThatThrownBy(() -> loader.parse("g.yaml", yaml)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("g.yaml: ").hasMessageContaining(message);
  }

  @Test
  void aMisspelledSectionHoldingAListIsNamedAsWrittenWithTheNearestKey() {
    refused("key:\n  - key: a\n    team: ci\n    tier: gold\n",
        "unknown key 'key' (known keys here: admin, cache, cloud, failover, keys, local, logging, metrics, quota,"
            + " responses, server, shaping, spend, store, traces; did you mean 'keys'?)");
  }

  @Test
  void aMisspelledKeyInsideAListEntryIsNamedByIndexAndOffersTheNearest() {
    refused("keys:\n  - { key: a, team: ci, tier: gold }\n  - { kye: b, team: ci, tier: gold }\n",
        "unknown key 'keys[1].kye' (known keys here: key, keyHash, models, team, tier; did you mean 'key'?)");
  }

  @Test
  void aKeyFarFromEveryKnownOneGetsTheSortedListWithoutAGuess() {
    refused("failover:\n  banana: 3\n", "unknown key 'failover.banana' (known keys here: capacityStreak, fleetRefresh,"
        + " fleetTimeout, historySize, localFor, maxLocalFor, probeLease, retryLocally)");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "server:\\n  port: eighty|key 'server.port': expected a whole number, got 'eighty'",
      "failover:\\n  capacityStreak: 2.5|key 'failover.capacityStreak': expected a whole number, got '2.5'",
      "cache:\\n  enabled: maybe|key 'cache.enabled': expected true or false, got 'maybe'",
      "quota:\\n  alertAt: high|key 'quota.alertAt': expected a number, got 'high'",
      "server:\\n  idleTimeout: [1]|key 'server.idleTimeout': expected a duration (90s, 5m), got a list or mapping",
      "server:\\n  maxRequestSize: { a: 1 }|key 'server.maxRequestSize': expected a size (512KiB, 8MiB), got a list or mapping",
  })
  void aValueOfTheWrongTypeNamesTheExpectedTypeInPlainWords(String yaml, String message) {
    refused(yaml.replace("\\n", "\n"), message);
  }

  @Test
  void aTierWrittenInUpperCaseIsRefusedAsAKeysTier() {
    refused("keys:\n  - { key: a, team: ci, tier: Gold }\n",
        "key 'keys[0].tier': 'Gold' is not one of gold, silver, bronze; did you mean 'gold'?");
  }

  @Test
  void aTierWrittenInUpperCaseIsRefusedAsAQuotaTierTheSameWay() {
    refused("quota:\n  tiers:\n    Gold: { share: 0.2 }\n",
        "unknown key 'quota.tiers.Gold' (known keys here: bronze, gold, silver; did you mean 'gold'?)");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "local:\\n  kind: Ollama|key 'local.kind': 'Ollama' is not one of ollama, openai; did you mean 'ollama'?",
      "shaping:\\n  degrade: Always|key 'shaping.degrade': 'Always' is not one of never, pressure, always; did you mean 'always'?",
      "cache:\\n  scope: teem|key 'cache.scope': 'teem' is not one of team, tier, global; did you mean 'team'?",
  })
  void everyChoiceIsCaseSensitiveAndOffersTheNearestWord(String yaml, String message) {
    refused(yaml.replace("\\n", "\n"), message);
  }
}
