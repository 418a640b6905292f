package io.spillway.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Counts live threads by name prefix, virtual threads included, from the JVM's own JSON thread
 * dump (the platform thread list leaves virtual threads out).
 */
public final class ThreadCensus {
  private ThreadCensus() {}

  public static int named(String prefix) {
    try {
      Path dump = Files.createTempFile("threads", ".json");
      Files.delete(dump);
      try {
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
            .dumpThreads(dump.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
        JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper().readTree(dump.toFile());
        int n = 0;
        for (JsonNode container : root.path("threadDump").path("threadContainers")) {
          for (JsonNode thread : container.path("threads")) {
            if (thread.path("name").asText("").startsWith(prefix)) {
              n++;
            }
          }
        }
        return n;
      } finally {
        Files.deleteIfExists(dump);
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

}
