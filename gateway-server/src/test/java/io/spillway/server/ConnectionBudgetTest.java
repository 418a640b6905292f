package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ServerConfig;
import io.spillway.server.ConnectionBudget.Descriptors;
import org.junit.jupiter.api.Test;

/** {@code server.maxConnections} against the descriptors the process may open. */
class ConnectionBudgetTest {
  private static ServerConfig maxConnections(int max) {
    return new ServerConfig(null, null, null, null, null, max, null, null, null, null, 256, null, null, null, null);
  }

  @Test
  void aLimitThatHoldsEveryConnectionAndItsUpstreamSocketChangesNothing() {
    ConnectionBudget budget = ConnectionBudget.of(maxConnections(1000), new Descriptors(100_000, 120));

    assertThat(budget.effective()).isEqualTo(1000);
    assertThat(budget.lowered()).isFalse();
  }

  @Test
  void multiplexedUpstreamsLeaveEachClientConnectionOneDescriptor() {
    ConnectionBudget budget = ConnectionBudget.of(ServerConfig.DEFAULTS, new Descriptors(20_000, 120), 1);

    // (20000 - 120 open - 256 reserved) / 1: ten thousand streams fit under a 20,000 limit
    assertThat(budget.effective()).isEqualTo(19624);
    assertThat(budget.warning()).contains("needs about 20376");
  }

  @Test
  void theDefaultTwentyThousandUnderATwentyThousandLimitIsLoweredToWhatFits() {
    ConnectionBudget budget = ConnectionBudget.of(ServerConfig.DEFAULTS, new Descriptors(20_000, 120));

    // (20000 - 120 open - 256 reserved) / 2 descriptors per connection
    assertThat(budget.effective()).isEqualTo(9812);
    assertThat(budget.lowered()).isTrue();
    assertThat(budget.warning()).doesNotContain("\n")
        .contains("server.maxConnections 20000").contains("RLIMIT_NOFILE").contains("20000")
        .contains("at most 9812 connections");
  }

  @Test
  void aLimitBelowWhatIsAlreadyOpenStillAcceptsOneConnection() {
    ConnectionBudget budget = ConnectionBudget.of(ServerConfig.DEFAULTS, new Descriptors(200, 150));

    assertThat(budget.effective()).isEqualTo(1);
  }

  @Test
  void anUnknownLimitKeepsTheConfiguredOne() {
    ConnectionBudget budget = ConnectionBudget.of(ServerConfig.DEFAULTS, Descriptors.UNKNOWN);

    assertThat(budget.effective()).isEqualTo(20_000);
    assertThat(budget.descriptorLimit()).isEqualTo(-1);
  }

  @Test
  void thisProcessReportsItsLimit() {
    Descriptors mine = Descriptors.ofThisProcess();

    assertThat(mine.limit()).isPositive();
    assertThat(mine.open()).isPositive().isLessThan(mine.limit());
  }
}
